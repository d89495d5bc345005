#!/usr/bin/env python3
"""Writes the worked example of ieeeio.md section 2.8 ("A.8") byte by byte from the spec, in both
byte orders, independently of sciobench's TypeScript code: one 3x2 float64 dataset (values 0..5,
dims 3,2 with dim0 fastest), a Char8 attribute name="rho" (stored without NUL) and an annotation
"hi" (stored with NUL); 143 bytes each.  Run: python3 make_a8.py  (in this directory)."""
import struct

def example(e):  # e is '<' (little-endian) or '>' (big-endian)
    i = lambda *v: struct.pack(e + "%di" % len(v), *v)
    out = b"\x01\x02\x03\x04"                      # magic bytes, order-independent
    out += i(0x01020304)                           # byte-order mark in the file's order
    out += i(1) + struct.pack(e + "hh", 1, 0)      # ndatasets = 1, version 1.0
    data = struct.pack(e + "6d", *[float(x) for x in range(6)])
    rank, dims = 2, (3, 2)
    out += i(1, len(data) + 12 + 4 * rank, 0)      # record header: data, size 68, seq 0
    out += i(len(data), 5, rank) + i(*dims)        # data header: 48 bytes, Float64, rank 2; dims
    out += data
    name, value = b"name\x00", b"rho"
    out += i(3, len(value) + len(name) + 12, 0)    # record header: attribute, size 20, seq 0
    out += i(len(value), 10, len(name)) + name + value  # Char8, namesize 5
    text = b"hi\x00"
    out += i(2, len(text), 0) + text               # annotation record, size 3, seq 0
    assert len(out) == 143, len(out)
    return out

for e, tag in (("<", "le"), (">", "be")):
    with open("a8_%s.ieeeio" % tag, "wb") as f:
        f.write(example(e))
