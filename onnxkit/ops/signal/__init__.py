"""Reference kernels: signal processing (DFT, STFT, window functions, mel filter banks).

Complex tensors are carried as real tensors with a trailing axis of 2 (real, imaginary);
a real signal has a trailing axis of 1.
"""
