"""Reference kernels: recurrent operators (RNN, GRU, LSTM).

They share one driver (``_recurrent``: layouts, directions, ``sequence_lens``) and one
table of gate activations (``_activations``); each op module only writes its cell.
"""
