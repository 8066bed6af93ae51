"""Write a tiny random-weight Qwen2-architecture GGUF for a real ``llama-server`` (no model download).

    python bench/tiny_gguf.py --vocab <llama.cpp>/models/ggml-vocab-qwen2.gguf --out var/tiny-qwen2.gguf

Standard library only. The tokenizer (tokens, merges, special ids) is copied from one of the vocab-only
files llama.cpp ships in its source tree; the weights are small Gaussian noise from a fixed seed, so
the file is the same on every machine. The model says nothing sensible: it is a real server with a real
chat template (tools rendered Hermes-style, ``<tool_call>`` parsed back by llama.cpp) and real sampling,
for exercising what a rambling model does to a client — output budgets, ``finish_reason: "length"``,
malformed output, preflight and fingerprints — not for scores.
"""

from __future__ import annotations

import argparse
import random
import struct
import sys
from array import array
from pathlib import Path
from typing import BinaryIO

ALIGNMENT = 32
# GGUF value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_SCALAR = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i", FLOAT32: "f", BOOL: "?"}
_SCALAR |= {UINT64: "Q", INT64: "q", FLOAT64: "d"}
F32 = 0

# Hermes-style tools (what Qwen2.5's template does, written here in our own minimal form): llama.cpp
# recognises <tool_call> in a template and parses such blocks in the reply back into tool calls.
CHAT_TEMPLATE = """\
{%- if messages[0].role == 'system' %}{%- set system = messages[0].content %}{%- else %}\
{%- set system = 'You are a helpful assistant.' %}{%- endif %}
<|im_start|>system
{{ system }}
{%- if tools %}

# Tools
You may call one or more functions. Function signatures are within <tools></tools>:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
For each function call, return a JSON object with the function name and arguments within \
<tool_call></tool_call> tags.
{%- endif %}<|im_end|>
{% for message in messages %}
{%- if message.role == 'user' %}<|im_start|>user
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{{ message.content or '' }}
{%- if message.tool_calls %}{%- for call in message.tool_calls %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments if call.function.arguments is string \
else call.function.arguments | tojson }}}
</tool_call>
{%- endfor %}{%- endif %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def _read(fh: BinaryIO, fmt: str) -> tuple:
    size = struct.calcsize("<" + fmt)
    return struct.unpack("<" + fmt, fh.read(size))


def _read_string(fh: BinaryIO) -> bytes:
    (n,) = _read(fh, "Q")
    return fh.read(n)


def _skip_value(fh: BinaryIO, kind: int) -> None:
    if kind == STRING:
        _read_string(fh)
    elif kind == ARRAY:
        item, n = _read(fh, "IQ")
        if item in _SCALAR:
            fh.read(struct.calcsize("<" + _SCALAR[item]) * n)
        else:
            for _ in range(n):
                _skip_value(fh, item)
    else:
        fh.read(struct.calcsize("<" + _SCALAR[kind]))


def tokenizer_fields(path: Path) -> list[tuple[str, bytes]]:
    """``(key, raw bytes of type + value)`` of every ``tokenizer.*`` key of a GGUF file, chat template excluded."""
    out = []
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise SystemExit(f"{path} is not a GGUF file")
        version, _tensors, kv_count = _read(fh, "IQQ")
        if version < 2:
            raise SystemExit(f"{path}: GGUF version {version} is too old")
        for _ in range(kv_count):
            key = _read_string(fh).decode()
            start = fh.tell()
            (kind,) = _read(fh, "I")
            _skip_value(fh, kind)
            end = fh.tell()
            if key.startswith("tokenizer.") and key != "tokenizer.chat_template":
                fh.seek(start)
                out.append((key, fh.read(end - start)))
    return out


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, kind: int, value: object) -> bytes:
    body = _string(value) if kind == STRING else struct.pack("<" + _SCALAR[kind], value)
    return _string(key) + struct.pack("<I", kind) + body


def _noise(n: int, rng: random.Random, scale: float) -> bytes:
    return array("f", (rng.gauss(0.0, scale) for _ in range(n))).tobytes()


def tensors(*, vocab: int, embd: int, ff: int, layers: int, kv_dim: int) -> list[tuple[str, tuple[int, ...], str]]:
    """``(name, GGUF dims (fastest first), init)`` of a Qwen2 model: ``ones`` for norms, ``noise`` else."""
    out = [("token_embd.weight", (embd, vocab), "noise"), ("output_norm.weight", (embd,), "ones")]
    for i in range(layers):
        p = f"blk.{i}."
        out += [
            (p + "attn_norm.weight", (embd,), "ones"),
            (p + "attn_q.weight", (embd, embd), "noise"),
            (p + "attn_q.bias", (embd,), "noise"),
            (p + "attn_k.weight", (embd, kv_dim), "noise"),
            (p + "attn_k.bias", (kv_dim,), "noise"),
            (p + "attn_v.weight", (embd, kv_dim), "noise"),
            (p + "attn_v.bias", (kv_dim,), "noise"),
            (p + "attn_output.weight", (embd, embd), "noise"),
            (p + "ffn_norm.weight", (embd,), "ones"),
            (p + "ffn_gate.weight", (embd, ff), "noise"),
            (p + "ffn_up.weight", (embd, ff), "noise"),
            (p + "ffn_down.weight", (ff, embd), "noise"),
        ]
    return out


def write(*, vocab_path: Path, out: Path, embd: int, layers: int, heads: int, kv_heads: int, seed: int) -> int:
    fields = tokenizer_fields(vocab_path)
    n_vocab = next(len_ for key, raw in fields if key == "tokenizer.ggml.tokens" for len_ in [_array_len(raw)])
    ff, head_dim = embd * 2, embd // heads
    kv_dim = head_dim * kv_heads
    kvs = [
        _kv("general.architecture", STRING, "qwen2"),
        _kv("general.name", STRING, "physreview-tiny-random-qwen2"),
        _kv("general.alignment", UINT32, ALIGNMENT),
        _kv("qwen2.block_count", UINT32, layers),
        _kv("qwen2.context_length", UINT32, 32768),
        _kv("qwen2.embedding_length", UINT32, embd),
        _kv("qwen2.feed_forward_length", UINT32, ff),
        _kv("qwen2.attention.head_count", UINT32, heads),
        _kv("qwen2.attention.head_count_kv", UINT32, kv_heads),
        _kv("qwen2.rope.freq_base", FLOAT32, 1000000.0),
        _kv("qwen2.attention.layer_norm_rms_epsilon", FLOAT32, 1e-6),
        _kv("general.file_type", UINT32, 0),
        _kv("tokenizer.chat_template", STRING, CHAT_TEMPLATE),
    ] + [_string(key) + raw for key, raw in fields]
    layout = tensors(vocab=n_vocab, embd=embd, ff=ff, layers=layers, kv_dim=kv_dim)
    infos, offset = [], 0
    for name, dims, _init in layout:
        infos.append(_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims))
        infos[-1] += struct.pack("<IQ", F32, offset)
        size = 4
        for d in dims:
            size *= d
        offset += -(-size // ALIGNMENT) * ALIGNMENT
    rng = random.Random(seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        fh.write(b"GGUF" + struct.pack("<IQQ", 3, len(layout), len(kvs)))
        for blob in kvs + infos:
            fh.write(blob)
        fh.write(b"\0" * (-fh.tell() % ALIGNMENT))
        for _name, dims, init in layout:
            n = 1
            for d in dims:
                n *= d
            fh.write(array("f", [1.0] * n).tobytes() if init == "ones" else _noise(n, rng, 0.05))
            fh.write(b"\0" * (-(4 * n) % ALIGNMENT))
    return n_vocab


def _array_len(raw: bytes) -> int:
    kind, _item, n = struct.unpack("<IIQ", raw[:16])
    if kind != ARRAY:
        raise SystemExit("tokenizer.ggml.tokens is not an array")
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=Path, required=True, help="a vocab-only GGUF (llama.cpp models/)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--embd", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    if not args.vocab.is_file():
        parser.error(f"--vocab: no such file {args.vocab}")
    if args.embd % args.heads or args.heads % args.kv_heads:
        parser.error("--embd must be a multiple of --heads, and --heads of --kv-heads")
    n_vocab = write(
        vocab_path=args.vocab,
        out=args.out,
        embd=args.embd,
        layers=args.layers,
        heads=args.heads,
        kv_heads=args.kv_heads,
        seed=args.seed,
    )
    print(f"{args.out}: qwen2, {n_vocab} tokens, {args.layers} layers × {args.embd}, {args.out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
