"""A BERT sentence encoder read straight from its files: the `tokenizers` tokenizer and a torch
forward pass over the safetensors weights, then mean pooling and L2 normalization.

This is what sentence-transformers runs for all-MiniLM-L6-v2 (modules.json: Transformer, mean
Pooling, Normalize), without importing it: `import sentence_transformers` took 5.5 s of every
process that embedded (it pulls in transformers, scikit-learn and scipy), where torch alone takes
1.6 s and the tokenizer 0.04 s. Only the plain architecture is read (absolute positions, GELU,
post-LayerNorm); `BertEncoder` refuses any other config rather than compute something else.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PAD = "[PAD]"


def word_piece_tokenizer(folder: Path):
    """The model's own tokenizer (tokenizer.json), with the length cap and padding that file
    carries (128, for training) switched off: counting needs every piece; `BertEncoder` sets its own."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class BertEncoder:
    """`encode(texts)` → one unit-length float32 vector per text, each read up to `max_tokens`
    word pieces (with [CLS] and [SEP]); longer texts are cut, as sentence-transformers cuts them."""

    def __init__(self, folder: Path, max_tokens: int):
        import torch
        from safetensors.torch import load_file

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        expected = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
        odd = {k: config.get(k) for k, v in expected.items() if config.get(k, v) != v}
        if odd:
            raise ValueError(f"{folder}: not a plain BERT encoder ({odd})")
        self.torch = torch
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.eps = config["layer_norm_eps"]
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {name.removeprefix("bert."): tensor.float() for name, tensor in weights.items()}
        self.tokenizer = word_piece_tokenizer(folder)
        self.tokenizer.enable_truncation(max_length=max_tokens)
        pad_id = self.tokenizer.token_to_id(PAD)
        self.tokenizer.enable_padding(pad_id=pad_id, pad_token=PAD)  # to the longest text of each call

    def encode(self, texts: list[str]) -> np.ndarray:
        torch = self.torch
        encodings = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encodings], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in encodings], dtype=torch.float32)
        with torch.inference_mode():
            hidden = self._forward(ids, mask)
            summed = (hidden * mask.unsqueeze(-1)).sum(dim=1)
            pooled = summed / mask.sum(dim=1, keepdim=True).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy().astype(np.float32, copy=False)

    def _forward(self, ids, mask):
        torch, w = self.torch, self.w
        functional = torch.nn.functional
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:length] + w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, "embeddings.LayerNorm")
        # Padded positions are never attended to: the largest negative float before the softmax.
        blocked = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
        for n in range(self.layers):
            at = f"encoder.layer.{n}."
            query, key, value = (self._heads(x, at + f"attention.self.{part}") for part in ("query", "key", "value"))
            context = functional.scaled_dot_product_attention(query, key, value, attn_mask=blocked)
            context = context.transpose(1, 2).reshape(batch, length, -1)
            x = self._norm(self._linear(context, at + "attention.output.dense") + x, at + "attention.output.LayerNorm")
            inner = functional.gelu(self._linear(x, at + "intermediate.dense"))
            x = self._norm(self._linear(inner, at + "output.dense") + x, at + "output.LayerNorm")
        return x

    def _heads(self, x, name: str):
        """A projection of `x` (batch, length, hidden) split into the attention heads: (batch, heads, length, hidden / heads)."""
        batch, length, _ = x.shape
        return self._linear(x, name).view(batch, length, self.heads, -1).transpose(1, 2)

    def _linear(self, x, name: str):
        return self.torch.nn.functional.linear(x, self.w[name + ".weight"], self.w[name + ".bias"])

    def _norm(self, x, name: str):
        weight = self.w[name + ".weight"]
        return self.torch.nn.functional.layer_norm(x, weight.shape, weight, self.w[name + ".bias"], self.eps)
