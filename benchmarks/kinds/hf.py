"""Hugging Face transformers, tiny configs with random weights, exported the way users do.

Four families: a BERT-like encoder, a GPT-2-like decoder step with past key values, a
T5-like encoder-decoder step and a Llama-style decoder step (RoPE, grouped-query attention,
past key values). Each builder returns a ``torch.nn.Module`` and example inputs; the
exporter (TorchScript tracing or dynamo) is chosen by the caller (``export.py``). Past key
values go in and out as plain tensors (``past_k0, past_v0, ...``); the wrapper turns them
into a ``DynamicCache`` inside ``forward``, as Optimum's exporters do.
"""

from __future__ import annotations

from benchmarks.kinds.tvshim import import_torchvision

BATCH, SEQ, PAST, VOCAB = 2, 16, 8, 512


def _torch():
    import_torchvision()  # transformers imports it when it is installed
    import torch

    torch.manual_seed(0)
    return torch


def _ids(torch, length: int):
    return torch.randint(0, VOCAB, (BATCH, length), dtype=torch.int64)


def bert():
    """BertModel: 2 layers, hidden 64, 2 heads; outputs the last hidden state."""
    torch = _torch()
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=64)
    model = BertModel(config).eval()

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, SEQ // 2:] = 0  # one padded row: the mask matters
    inputs = {"input_ids": _ids(torch, SEQ), "attention_mask": mask,
              "token_type_ids": torch.zeros(BATCH, SEQ, dtype=torch.int64)}
    return Encoder().eval(), inputs, ["last_hidden_state"]


class _WithPast:
    """Builds the wrapper module of a decoder that takes and returns past key values."""

    @staticmethod
    def wrap(torch, model, layers: int):
        from transformers import DynamicCache

        class Decoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, input_ids, attention_mask, *past):
                cache = DynamicCache()
                for i in range(layers):
                    cache.update(past[2 * i], past[2 * i + 1], i)
                out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                 past_key_values=cache, use_cache=True)
                present = []
                for layer in out.past_key_values.layers:
                    present += [layer.keys, layer.values]
                return (out.logits, *present)

        return Decoder().eval()

    @staticmethod
    def inputs(torch, layers: int, kv_heads: int, head_dim: int):
        inputs = {"input_ids": _ids(torch, 1),
                  "attention_mask": torch.ones(BATCH, PAST + 1, dtype=torch.int64)}
        for i in range(layers):
            inputs[f"past_k{i}"] = torch.randn(BATCH, kv_heads, PAST, head_dim)
            inputs[f"past_v{i}"] = torch.randn(BATCH, kv_heads, PAST, head_dim)
        names = ["logits"] + [f"present_{kv}{i}" for i in range(layers) for kv in "kv"]
        return inputs, names


def gpt2():
    """GPT2LMHeadModel: 2 layers, hidden 64, 4 heads; one new token after 8 past ones."""
    torch = _torch()
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    inputs, names = _WithPast.inputs(torch, 2, 4, 16)
    return _WithPast.wrap(torch, model, 2), inputs, names


def llama():
    """LlamaForCausalLM: 2 layers, hidden 64, 4 query heads sharing 2 key/value heads
    (grouped-query attention), RoPE, RMSNorm, SwiGLU; one new token after 8 past ones."""
    torch = _torch()
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64)
    model = LlamaForCausalLM(config).eval()
    inputs, names = _WithPast.inputs(torch, 2, 2, 16)
    return _WithPast.wrap(torch, model, 2), inputs, names


def t5():
    """T5ForConditionalGeneration: 2+2 layers, d_model 64, relative position buckets;
    the encoder on 16 tokens and one decoder pass over 4 tokens, returning logits."""
    torch = _torch()
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                      num_decoder_layers=2, num_heads=4, decoder_start_token_id=0)
    model = T5ForConditionalGeneration(config).eval()

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, decoder_input_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              decoder_input_ids=decoder_input_ids, use_cache=False).logits

    inputs = {"input_ids": _ids(torch, SEQ), "attention_mask": torch.ones(BATCH, SEQ, dtype=torch.int64),
              "decoder_input_ids": _ids(torch, 4)}
    return Step().eval(), inputs, ["logits"]


MODELS = {"bert": bert, "gpt2_past": gpt2, "t5_step": t5, "llama_past": llama}
