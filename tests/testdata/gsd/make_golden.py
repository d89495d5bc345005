#!/usr/bin/python3
"""Make the GSD golden files with the real library: python3-gsd 2.7.0 (Debian bookworm).

Run from anywhere with the system interpreter (not a pyenv one):

    /usr/bin/python3 tests/testdata/gsd/make_golden.py

It rewrites every *.gsd / *.gsd.gz file here and manifest.json. The data is deterministic
(seeded numpy generators, or formulas), so the output is the same on every run. manifest.json
records, per file, what python3-gsd reads back: frame count, and for every frame the chunks in
the order they were written (gsd.fl files) or in name-id order (gsd.hoomd files), with dtype,
N, M and the zlib CRC-32 of the chunk bytes. The Deno tests check our reader against it and
re-encode the chunks with our writer to compare the files byte for byte.
"""
import gzip
import json
import os
import zlib

import numpy as np
import gsd
import gsd.fl
import gsd.hoomd

assert gsd.__version__ == "2.7.0", f"need python3-gsd 2.7.0, have {gsd.__version__}"
HERE = os.path.dirname(os.path.abspath(__file__))


def describe(path, order=None):
    """What gsd.fl reads back: per frame the chunks in `order` (name lists per frame) or id order."""
    with gsd.fl.open(path, "rb") as f:
        names = f.find_matching_chunk_names("")  # gsd 2.7: in id order (order of first use)
        frames = []
        for i in range(f.nframes):
            want = order[i] if order is not None else names
            chunks = []
            for name in want:
                if not f.chunk_exists(frame=i, name=name):
                    continue
                a = f.read_chunk(frame=i, name=name)
                if a.ndim == 1:
                    n, m = a.shape[0], 1
                else:
                    n, m = a.shape
                chunks.append([name, str(a.dtype), int(n), int(m), zlib.crc32(a.tobytes())])
            frames.append(chunks)
        return {
            "application": f.application,
            "schema": f.schema,
            "schema_version": list(f.schema_version),
            "gsd_version": list(f.gsd_version),
            "nframes": f.nframes,
            "names": sorted(names),
            "frames": frames,
        }


def hoomd_file(name, n, nframes, position, orientation):
    """Frames as scripts/benchmark-hoomd.py builds them: step = 10 i, [0][0] = i."""
    path = os.path.join(HERE, name)
    if os.path.exists(path):
        os.remove(path)
    with gsd.hoomd.open(path, "wb") as traj:
        for i in range(nframes):
            s = gsd.hoomd.Snapshot()
            s.particles.N = n
            s.configuration.step = 10 * i
            position[0][0] = i
            orientation[0][0] = i
            s.particles.position = position
            s.particles.orientation = orientation
            traj.append(s)
    d = describe(path)
    d.update({"file": name, "kind": "hoomd", "N": n})
    return d


def fl_file(name, frames, application="golden", schema="test", schema_version=(1, 2), gz=False):
    """A gsd.fl file: frames is a list of lists of (name, array) in write order."""
    path = os.path.join(HERE, name[:-6] if gz else name)
    with gsd.fl.open(path, "wb", application=application, schema=schema,
                     schema_version=schema_version) as f:
        for frame in frames:
            for cname, data in frame:
                f.write_chunk(name=cname, data=data)
            f.end_frame()
    d = describe(path, [[c for c, _ in fr] for fr in frames])
    d.update({"file": name, "kind": "fl"})
    if gz:  # gzip twice: long zero runs shrink about 20000-fold
        with open(path, "rb") as src, open(os.path.join(HERE, name), "wb") as dst:
            dst.write(gzip.compress(gzip.compress(src.read(), 9, mtime=0), 9, mtime=0))
        os.remove(path)
    return d


manifest = []

# 1. hoomd, N = 4, 3 frames, formula data.
pos = (np.arange(12, dtype=np.float32).reshape(4, 3) * 0.5 + 0.25).astype(np.float32)
ori = (np.arange(16, dtype=np.float32).reshape(4, 4) * 0.125 + 0.0625).astype(np.float32)
manifest.append(hoomd_file("hoomd_n4.gsd", 4, 3, pos, ori))

# 2. hoomd, N = 1024, 3 frames, seeded random data.
rng = np.random.default_rng(1024)
pos = rng.random((1024, 3), dtype=np.float32)
ori = rng.random((1024, 4), dtype=np.float32)
manifest.append(hoomd_file("hoomd_n1024.gsd", 1024, 3, pos, ori))

# 3. hoomd, N = 1, 100 frames: 300 index entries, so the index grows 128 -> 256 -> 512 slots.
rng = np.random.default_rng(1)
pos = rng.random((1, 3), dtype=np.float32)
ori = rng.random((1, 4), dtype=np.float32)
manifest.append(hoomd_file("hoomd_index_growth.gsd", 1, 100, pos, ori))

# 4. gsd.fl, all ten numeric types, N = 0 chunks, and a name list that grows twice
#    (1024 -> 2048 -> 4096 bytes) and is then appended to in place.
rng = np.random.default_rng(4)
TYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
         np.float32, np.float64]


def array(k, rows, cols):
    t = TYPES[k % len(TYPES)]
    if np.issubdtype(t, np.floating):
        a = rng.standard_normal((rows, cols)).astype(t)
    else:
        info = np.iinfo(t)
        a = rng.integers(info.min, info.max, size=(rows, cols), dtype=t, endpoint=True)
    return a[:, 0].copy() if cols == 1 else a


frames = []
frame = []
for k in range(40):  # 40 names of 32 characters: 1320 bytes > 1024
    frame.append((f"log/quantity/{k:03d}/" + "x" * 15, array(k, k % 4, 1 + k % 3)))
frames.append(frame)
frame = []
for k in range(40):  # 40 names of 48 characters: 3280 bytes in all > 2048
    frame.append((f"state/long/name/{k:03d}/" + "y" * 28, array(k + 3, 1 + k % 5, 1 + k % 2)))
frame.append(("log/quantity/007/" + "x" * 15, array(7, 2, 2)))
frames.append(frame)
frames.append([(f"log/quantity/{k:03d}/" + "x" * 15, array(k, 3, 1)) for k in (5, 1, 9)])
frames.append([("a", array(0, 2, 1)), ("zz", array(9, 1, 2)), ("log/quantity/002/" + "x" * 15,
                                                              array(2, 1, 1))])
manifest.append(fl_file("fl_types_names.gsd", frames))

# 5. gsd.fl, chunks at and around the 8 MiB limit of the 16 MiB write buffer (gzip'ed).
MIB = 1 << 20


def pattern(size, k):
    """Zeros with a marker byte every 64 KiB and at the end (compresses to almost nothing)."""
    a = np.zeros(size, dtype=np.uint8)
    marks = a[::65536]
    a[::65536] = (np.arange(marks.size) * 7 + k) % 251 + 1
    a[-1] = k
    return a


frames = [
    [("a", pattern(1, 1)), ("big", pattern(9 * MIB, 2)), ("b", pattern(1, 3))],
    [("a", pattern(1, 4)), ("exact", pattern(8 * MIB, 5)), ("below", pattern(8 * MIB - 1, 6)),
     ("b", pattern(2, 7))],
    [("c1", pattern(8 * MIB - 1, 8)), ("c2", pattern(8 * MIB - 1, 9)), ("d", pattern(2, 10)),
     ("e", pattern(1, 11)), ("a", pattern(3, 12))],
]
manifest.append(fl_file("fl_big_chunks.gsd.gz.gz", frames, gz=True))

with open(os.path.join(HERE, "manifest.json"), "w") as out:
    out.write("[\n")
    out.write(",\n".join(json.dumps(d, separators=(",", ":")) for d in manifest))
    out.write("\n]")
    out.write("\n")
