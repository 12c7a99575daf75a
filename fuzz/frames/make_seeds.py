#!/usr/bin/env python3
"""Writes the frames target's seeds (fuzz/frames/corpus/) from the text
protos beside this script, each encoded with protoc as a FastRequest, in
the target's input format (frames_fuzz.cpp): per frame a kind byte (here 1:
a framed body), a 2-byte big-endian length and the body; kind 0 is a raw
4-byte header. Run from the repository root: python3 fuzz/frames/make_seeds.py
"""
import pathlib
import struct
import subprocess

here = pathlib.Path(__file__).parent


def encode(name):
    text = (here / "textproto" / f"{name}.txtpb").read_bytes()
    return subprocess.run(
        ["protoc", "-I", "proto", "--encode=schedplug.v1.FastRequest",
         "proto/schedplug/v1/schedplug.proto"],
        input=text, check=True, capture_output=True).stdout


def body(data):
    return b"\x01" + struct.pack(">H", len(data)) + data


def raw(size, data=b""):
    return b"\x00" + struct.pack(">I", size) + data


seeds = {
    "pre_filter.bin": body(encode("pre_filter")),
    "cycle.bin": body(encode("pre_filter")) + body(encode("filter_nodes"))
    + body(encode("pre_score")) + body(encode("notes")),
    "not_a_request.bin": body(b"\x0a\x05hello") + body(b""),
    "oversize.bin": body(encode("pre_filter")) + raw(0x7FFFFFFF),
    "cut_short.bin": raw(64, b"\x0a\x02"),
}
for name, data in seeds.items():
    (here / "corpus" / name).write_bytes(data)
