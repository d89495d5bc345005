/**
 * The Python side of `sciobench table --peer python-gsd` (and `--peer zarr-python`, the same
 * program with `--api zarr`): a Python program, kept here as a
 * string so a compiled sciobench carries it (no file is read next to the module). It is run as
 * `python3 -c GSD_PEER_PY ARGS`. To run it alone, save it first:
 * `deno eval 'import { GSD_PEER_PY } from "./lib/peers/python_gsd/program.ts"; console.log(GSD_PEER_PY)' > gsd_peer.py`.
 * @module
 */

import { OPEN_WARMUP_OPENS, OPEN_WARMUP_SECONDS } from "../../sys/meter.ts";
import { SUB_BITS, TOP_EXPONENT } from "../../report/histogram.ts";

/**
 * Source of the Python program that measures the table with python3-gsd (`--api hoomd|fl`) or
 * python3-zarr 2.13 (`--api zarr|zarr-nested`).
 */
export const GSD_PEER_PY = String.raw`#!/usr/bin/python3
"""The GSD table of 'sciobench table', measured with the real library (python3-gsd).

Run with the system interpreter, where Debian's python3-gsd (2.7) is installed:

    /usr/bin/python3 gsd_peer.py --size 128MiB --n 32^2,128^2,1024^2 [--dir DIR]

'sciobench table --framing gsd --peer python-gsd' runs it for each cell and adds its rows to the
same CSV. Each cell does what sciobench's table does, with the same seeded data and the same
random read order (so rows compare one to one):

1. write ceil(size / 28 N) frames the way scripts/benchmark-hoomd.py does (gsd.hoomd
   'append' of a Snapshot with N, step = 10 i, position and orientation with [0][0] = i),
   then fsync the file: all inside the timed write;
2. open the file once and close it (timed as open_first_ms), open and close it up to
   OPEN_WARMUP_OPENS more times (untimed, OPEN_WARMUP_SECONDS at most), drop it from the page
   cache (fdatasync + posix_fadvise DONTNEED, no root needed) and time the open
   ('gsd.hoomd.open(path, 'rb')'), as sciobench's is;
3. read the 0.25 GiB sample in order ('traj[i]'), checking every frame against what was written;
4. drop again, read the sample in the seeded random order, checking every frame.

With '--api fl' the same cells run on the file layer ('gsd.fl': write_chunk / read_chunk of
exactly the chunks gsd.hoomd writes), which shows what the hoomd layer adds. With '--api zarr'
(or 'zarr-nested') they run on python3-zarr 2.13: a store (zarr.DirectoryStore, or
NestedDirectoryStore) with the arrays particles/position (frames, N, 3) and particles/orientation
(frames, N, 4), float32, one frame per chunk, no compressor, as sciobench's zarr framing writes
them; frame i is written as 'a[i] = ...' and read as 'a[i]'; every file and directory of the store
is fsynced at the end of the write and dropped before each read. Rows use the columns of
'sciobench table' (CSV, or JSON lines with --format jsonl); framing is 'python-gsd',
'python-gsd-fl', 'zarr-python' or 'zarr-python-nested'.
"""
import argparse
import ctypes
import ctypes.util
import json
import math
import os
import resource
import shutil
import sys
import tempfile
import time

COLUMNS = [
    "framing", "size_bytes", "N", "open_ms", "write_MiBps", "read_MiBps", "random_MiBps",
    "random_ms", "frames", "file_bytes", "repeat", "write_s", "write_user_s", "write_sys_s",
    "read_user_s", "read_sys_s", "write_dev_bytes", "read_dev_bytes", "resident_after_drop",
    "fs_type", "data_bytes", "read_frames", "read_bytes", "read_s", "random_s", "random_user_s",
    "random_sys_s", "random_dev_bytes", "drop_s", "write_user_ticks", "write_sys_ticks", "clk_tck",
    "seed", "write_sync_s", "read_user_ticks", "read_sys_ticks", "random_user_ticks",
    "random_sys_ticks", "cache", "fsync", "cold_ok", "bs_bytes", "direct", "huge_pages",
    "engine", "iodepth", "open_dev_bytes",
    "open_first_ms", "read_verify_s", "random_verify_s",
    "read_p50_us", "read_p90_us", "read_p99_us", "read_p999_us", "read_max_us", "read_iops",
    "random_p50_us", "random_p90_us", "random_p99_us", "random_p999_us", "random_max_us",
    "random_iops", "read_call_p50_us", "read_call_p99_us", "random_call_p50_us",
    "random_call_p99_us", "open_cold_ok", "read_cold_ok", "random_cold_ok", "cold_why",
    "read_io_MiBps", "random_io_MiBps", "order",
    # the audit trail's calls on names: sciobench's own, not seen in this process
    "write_files_created", "write_dirs_created", "write_files_opened", "write_files_synced",
    "write_dirs_synced", "write_meta_s", "read_files_opened", "read_meta_s",
    "random_files_opened", "random_meta_s",
    "stat", "error",
]
METADATA_COLUMNS = COLUMNS[COLUMNS.index("order") + 1:COLUMNS.index("stat")]
OPEN_WARMUP_OPENS = ${OPEN_WARMUP_OPENS}
OPEN_WARMUP_SECONDS = ${OPEN_WARMUP_SECONDS}
MASK = 0xFFFFFFFF
GOLDEN = 0x9E3779B9
MIB = 1 << 20


def fail(message, code=2):
    print(f"gsd_peer: error: {message}", file=sys.stderr)
    sys.exit(code)


ZARR_APIS = ("zarr", "zarr-nested")
FRAMING = {"hoomd": "python-gsd", "fl": "python-gsd-fl", "zarr": "zarr-python",
           "zarr-nested": "zarr-python-nested"}


def load(api):
    """Imports the library of api (the caller turns exit code 3 into "peer unavailable")."""
    global np, gsd, zarr
    try:
        import numpy as np
    except ImportError as e:
        fail(f"numpy is not installed for {sys.executable} ({e}); apt-get install python3-numpy", 3)
    if api in ZARR_APIS:
        try:
            import zarr
        except ImportError as e:
            fail(f"python3-zarr is not installed for {sys.executable} ({e}); "
                 "apt-get install python3-zarr", 3)
        if not zarr.__version__.startswith("2."):
            fail(f"zarr {zarr.__version__} for {sys.executable}: the peer drives zarr 2's "
                 "DirectoryStore", 3)
        return
    try:
        import gsd
        import gsd.fl
        import gsd.hoomd
    except ImportError as e:
        fail(f"python3-gsd is not installed for {sys.executable} ({e}); apt-get install python3-gsd", 3)


# ---- the data and order of sciobench's table (lib/workloads/pattern.ts, table.ts) -----------

class Rng:
    """sciobench's seeded generator (SplitMix32-style), scalar version."""

    def __init__(self, seed):
        self.s = (seed & MASK) ^ GOLDEN

    def next_u32(self):
        self.s = (self.s + GOLDEN) & MASK
        z = self.s
        z = ((z ^ (z >> 16)) * 0x85EBCA6B) & MASK
        z = ((z ^ (z >> 13)) * 0xC2B2AE35) & MASK
        return z ^ (z >> 16)

    def below(self, n):
        return math.floor(self.next_u32() / 4294967296 * n)


def random_floats(seed, start, count):
    """Elements start .. start+count-1 of the stream of Rng(seed), as float32 (vectorised)."""
    s0 = (seed & MASK) ^ GOLDEN
    k = np.arange(start + 1, start + count + 1, dtype=np.uint64)
    z = ((np.uint64(s0) + k * np.uint64(GOLDEN)) & np.uint64(MASK)).astype(np.uint32)
    z = (z ^ (z >> np.uint32(16))) * np.uint32(0x85EBCA6B)
    z = (z ^ (z >> np.uint32(13))) * np.uint32(0xC2B2AE35)
    z = z ^ (z >> np.uint32(16))
    return (z.astype(np.float64) / 4294967296.0).astype(np.float32)


def table_arrays(n, seed):
    """Position (N x 3) and orientation (N x 4) of TableFrames(n, seed)."""
    s = (seed & MASK) ^ ((n * 0x27D4EB2D) & MASK)
    pos = random_floats(s, 0, 3 * n).reshape(n, 3)
    ori = random_floats(s, 3 * n, 4 * n).reshape(n, 4)
    return pos, ori


def shuffled_order(n, take, rng):
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order[:take]


# ---- measuring ---------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


IO_FIELDS = ["rchar", "wchar", "syscr", "syscw", "readBytes", "writeBytes"]


def proc_io():
    """The kernel's I/O counters of this process (/proc/self/io), or None."""
    try:
        with open("/proc/self/io") as f:
            return [int(line.split(":")[1]) for line in f if ":" in line][:6]
    except (OSError, ValueError):
        return None


class Trail:
    """The audit trail of a cell in sciobench's shape (lib/sys/audit.ts): the phases, the fsync,
    fdatasync and fadvise calls this program makes with their timing, the residency after each
    drop, the meter's readings and /proc/self/io. The library's own reads and writes are seen
    only in procIo (python3-gsd does its I/O in C)."""

    def __init__(self):
        self.phases = []
        self.cur = None
        self.begin("untimed", False)

    def begin(self, name, timed):
        self.end()
        self.cur = {"name": name, "timed": timed, "pid": os.getpid(),
                    "startNs": time.monotonic_ns(), "endNs": 0, "reads": 0, "readBytes": 0,
                    "writes": 0, "writeBytes": 0, "readBackwards": 0, "syncs": [],
                    "residency": [], "files": [], "processes": [], "io0": proc_io()}

    def end(self):
        p = self.cur
        if p is None:
            return
        self.cur = None
        if p["endNs"] == 0:
            p["endNs"] = time.monotonic_ns()
        for s in p["syncs"]:
            s["toEndS"] = (p["endNs"] - p["startNs"]) / 1e9 - s["atS"]
        io0, io1 = p.pop("io0"), proc_io()
        if io0 and io1:
            p["procIo"] = dict(zip(IO_FIELDS, [b - a for a, b in zip(io0, io1)]))
        if p["timed"] or p["syncs"] or p["residency"]:
            self.phases.append(p)

    def file(self, path):
        for f in self.cur["files"]:
            if f["path"] == path:
                return f
        f = {"path": path, "flags": "RDONLY", "opens": 0, "reads": 0, "readBytes": 0,
             "writes": 0, "writeBytes": 0, "readBackwards": 0, "readSkips": 0,
             "firstReadOffset": -1, "readLog": [], "syncs": 0}
        self.cur["files"].append(f)
        return f

    def sync(self, call, path, advice=None):
        self.file(path)["syncs"] += 1
        s = {"call": call, "path": path, "atS": (time.monotonic_ns() - self.cur["startNs"]) / 1e9,
             "toEndS": 0, "writesBefore": 0, "readsBefore": 0}
        if advice:
            s["advice"] = advice
        self.cur["syncs"].append(s)

    def resident(self, path, fraction):
        self.file(path)
        self.cur["residency"].append({"path": path, "fraction": fraction})

    def finish(self):
        self.end()
        return {"pid": os.getpid(), "phases": self.phases}


TRAIL = Trail()


class Meter:
    def __init__(self, phase="phase"):
        TRAIL.begin(phase, True)
        self.r0 = resource.getrusage(resource.RUSAGE_SELF)
        self.c0 = os.times()
        self.t0 = time.monotonic_ns()
        TRAIL.cur["startNs"] = self.t0

    def stop(self):
        t1 = time.monotonic_ns()
        t = (t1 - self.t0) / 1e9
        c = os.times()
        r = resource.getrusage(resource.RUSAGE_SELF)
        ticks = lambda x: round(x * CLK_TCK)
        us = lambda x: round(x * 1e6)
        TRAIL.cur["endNs"] = t1
        TRAIL.cur["readings"] = {
            "monotonicNs": [self.t0, t1],
            "userTicks": [ticks(self.c0.user), ticks(c.user)],
            "sysTicks": [ticks(self.c0.system), ticks(c.system)],
            "clkTck": CLK_TCK,
            "userUs": [us(self.r0.ru_utime), us(r.ru_utime)],
            "sysUs": [us(self.r0.ru_stime), us(r.ru_stime)],
            "inBlocks": [self.r0.ru_inblock, r.ru_inblock],
            "outBlocks": [self.r0.ru_oublock, r.ru_oublock],
        }
        TRAIL.begin("untimed", False)
        return {
            "wall": t,
            "user": r.ru_utime - self.r0.ru_utime,
            "sys": r.ru_stime - self.r0.ru_stime,
            "user_ticks": ticks(c.user) - ticks(self.c0.user),
            "sys_ticks": ticks(c.system) - ticks(self.c0.system),
            "dev_read": (r.ru_inblock - self.r0.ru_inblock) * 512,
            "dev_write": (r.ru_oublock - self.r0.ru_oublock) * 512,
        }


libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.statfs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]


def resident_fraction(fd, size):
    """Fraction of the file's pages in the page cache (mincore on a read-only mapping)."""
    if size == 0:
        return 0.0
    addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
    if addr in (None, ctypes.c_void_p(-1).value):
        return -1.0
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        pages = (size + page - 1) // page
        vec = ctypes.create_string_buffer(pages)
        if libc.mincore(addr, size, vec) != 0:
            return -1.0
        return sum(b & 1 for b in vec.raw) / pages
    finally:
        libc.munmap(addr, size)


def store_files(path):
    """The files of a store (a directory), in walk order; [path] for a file."""
    if not os.path.isdir(path):
        return [path]
    out = []
    for top, dirs, files in os.walk(path):
        dirs.sort()
        out.extend(os.path.join(top, f) for f in sorted(files))
    return out


def drop_cache(path, cache="cold"):
    """Drops the file (every file of a store) from the page cache (cold) or reads it through
    once (warm); the resident fraction after it (of a store's bytes, over all its files)."""
    t0 = time.monotonic()
    pages = resident_pages = 0.0
    for f in store_files(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            if cache == "cold":
                os.fdatasync(fd)
                TRAIL.sync("fdatasync", f)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                TRAIL.sync("fadvise", f, "DONTNEED")
            else:
                while os.read(fd, 4 << 20):
                    pass
            size = os.fstat(fd).st_size
            resident = resident_fraction(fd, size)
            TRAIL.resident(f, resident)
            if resident < 0:
                pages, resident_pages = 1.0, -1.0
            elif resident_pages >= 0:
                pages += size
                resident_pages += resident * size
        finally:
            os.close(fd)
    fraction = resident_pages if resident_pages < 0 else (resident_pages / pages if pages else 0.0)
    return time.monotonic() - t0, fraction


def sync_store(path):
    """fsyncs every file of the store, then every directory, deepest first (its parent last)."""
    dirs = []
    for top, _, files in os.walk(path):
        dirs.append(top)
        for f in sorted(files):
            fd = os.open(os.path.join(top, f), os.O_RDONLY)
            try:
                os.fsync(fd)
                TRAIL.sync("fsync", os.path.join(top, f))
            finally:
                os.close(fd)
    for d in sorted(dirs, key=lambda d: -d.count(os.sep)) + [os.path.dirname(path)]:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
            TRAIL.sync("fsync", d)
        finally:
            os.close(fd)


def zarr_store(path, api):
    return zarr.NestedDirectoryStore(path) if api == "zarr-nested" else zarr.DirectoryStore(path)


def zarr_open(path, api):
    """The store's two arrays, opened as a reader opens them (zarr.open_group, mode r)."""
    g = zarr.open_group(zarr_store(path, api), mode="r")
    return g["particles/position"], g["particles/orientation"]


FS_TYPES = {
    0xEF53: "ext4", 0x01021994: "tmpfs", 0x858458F6: "ramfs", 0x58465342: "xfs",
    0x9123683E: "btrfs", 0x6969: "nfs", 0x0BD00BD0: "lustre", 0x47504653: "gpfs",
    0x2FC12FC1: "zfs", 0x794C7630: "overlayfs", 0x65735546: "fuse", 0xFF534D42: "cifs",
    0x5346414F: "afs", 0x73717368: "squashfs", 0x01161970: "gfs2", 0x19830326: "beegfs",
    0x61756673: "aufs",
}


def fs_type(path):
    buf = ctypes.create_string_buffer(120)
    if libc.statfs(os.fsencode(path), buf) != 0:
        return "unknown"
    t = int.from_bytes(buf.raw[0:8], "little") & MASK
    return FS_TYPES.get(t, hex(t))


def num(x, digits=6):
    """sciobench's number format: full precision (rounding is for human output only)."""
    return x


# ---- one cell ----------------------------------------------------------------------------

def write_file(path, api, nframes, pos, ori):
    n = pos.shape[0]
    if api in ZARR_APIS:
        root = zarr.group(store=zarr_store(path, api))
        g = root.create_group("particles")
        arrays = []
        for name, a in (("position", pos), ("orientation", ori)):
            z = g.zeros(name, shape=(nframes,) + a.shape, chunks=(1,) + a.shape, dtype="<f4",
                        compressor=None)
            z.attrs["_ARRAY_DIMENSIONS"] = ["frame"] + [f"{name}_{k + 1}" for k in range(a.ndim)]
            arrays.append(z)
        for i in range(nframes):
            pos[0, 0] = i
            ori[0, 0] = i
            arrays[0][i] = pos
            arrays[1][i] = ori
        t0 = time.monotonic()
        sync_store(path)
        return time.monotonic() - t0
    if api == "hoomd":
        with gsd.hoomd.open(path, "wb") as traj:
            for i in range(nframes):
                s = gsd.hoomd.Snapshot()
                s.particles.N = n
                s.configuration.step = 10 * i
                pos[0, 0] = i
                ori[0, 0] = i
                s.particles.position = pos
                s.particles.orientation = ori
                traj.append(s)
    else:
        # The chunks gsd.hoomd writes for these frames (the same file, byte for byte).
        with gsd.fl.open(path, "wb", application=f"gsd.hoomd {gsd.__version__}", schema="hoomd",
                         schema_version=(1, 4)) as f:
            for i in range(nframes):
                if i == 0:
                    if n != 0:
                        f.write_chunk("particles/N", np.array([n], dtype=np.uint32))
                else:
                    f.write_chunk("configuration/step", np.array([10 * i], dtype=np.uint64))
                pos[0, 0] = i
                ori[0, 0] = i
                f.write_chunk("particles/position", pos)
                f.write_chunk("particles/orientation", ori)
                f.end_frame()
    t0 = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        TRAIL.sync("fsync", path)
    finally:
        os.close(fd)
    return time.monotonic() - t0


# ---- latency histogram: sciobench's buckets (lib/report/histogram.ts) ---------------------

SUB_BITS = ${SUB_BITS}
SUB = 1 << SUB_BITS
TOP_EXPONENT = ${TOP_EXPONENT}
LIMIT_NS = (1 << (TOP_EXPONENT + 1)) - 1
PERCENTILES = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p999")]


class Histogram:
    """Frame read latencies, ns, in the log-linear buckets of sciobench's LatencyHistogram."""

    def __init__(self):
        self.counts = {}
        self.count = 0
        self.sum = 0
        self.min = 0
        self.max = 0

    def record(self, ns):
        v = min(max(int(ns), 0), LIMIT_NS)
        if v < SUB:
            b = v
        else:
            shift = v.bit_length() - 1 - SUB_BITS
            b = SUB + shift * SUB + ((v >> shift) - SUB)
        self.counts[b] = self.counts.get(b, 0) + 1
        self.min = v if self.count == 0 else min(self.min, v)
        self.max = max(self.max, v)
        self.count += 1
        self.sum += v

    def percentile(self, fraction):
        rank = max(1, math.ceil(fraction * self.count))
        if rank >= self.count:
            return self.max
        seen = 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                if b < SUB:
                    mid = b
                else:
                    shift = (b - SUB) // SUB
                    mid = (SUB + (b - SUB) % SUB) * (1 << shift) + ((1 << shift) - 1) / 2
                return min(self.max, max(self.min, mid))
        return self.max

    def fields(self, phase, seconds):
        """The row's latency columns of phase, and the histogram (JSON lines rows only)."""
        out = {}
        for fraction, suffix in PERCENTILES:
            out[f"{phase}_{suffix}_us"] = self.percentile(fraction) / 1000 if self.count else None
        out[f"{phase}_max_us"] = self.max / 1000 if self.count else None
        out[f"{phase}_iops"] = self.count / seconds if self.count and seconds > 0 else None
        out[f"{phase}_latency"] = {
            "unit": "ns", "sub_bits": SUB_BITS, "count": self.count, "sum": self.sum,
            "min": self.min, "max": self.max,
            "buckets": [x for b in sorted(self.counts) for x in (b, self.counts[b])],
        }
        return out


def read_frames(handle, api, order, pos, ori, path, latency):
    """Reads and verifies the frames of order (each read's ns into latency); returns the seconds
    spent verifying."""
    verify = 0.0
    for i in order:
        t0 = time.perf_counter_ns()
        if api == "hoomd":
            snap = handle[i]
            p, o = snap.particles.position, snap.particles.orientation
        elif api in ZARR_APIS:
            p, o = handle[0][i], handle[1][i]
        else:
            p = handle.read_chunk(frame=i, name="particles/position")
            o = handle.read_chunk(frame=i, name="particles/orientation")
        latency.record(time.perf_counter_ns() - t0)
        t0 = time.perf_counter()
        pos[0, 0] = i
        ori[0, 0] = i
        if not (np.array_equal(p, pos) and np.array_equal(o, ori)):
            fail(f"{path}: frame {i} read back differs from what was written", 1)
        verify += time.perf_counter() - t0
    return verify


def run_cell(size, n, repeat, args):
    api = args.api
    per_frame = 28 * n
    nframes = math.ceil(size / per_frame)
    data_bytes = nframes * per_frame
    nread = min(nframes, max(1, int(nframes * args.sample / data_bytes)))
    read_bytes = nread * per_frame
    pos, ori = table_arrays(n, args.seed)
    scratch = tempfile.mkdtemp(prefix=".sciobench-gsd-peer-", dir=args.dir)
    try:
        path = os.path.join(scratch, "table.zarr" if api in ZARR_APIS else "table.gsd")
        if args.warmup:
            write_file(path, api, nframes, pos, ori)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        global TRAIL
        TRAIL = Trail()
        m = Meter("write")
        sync_s = write_file(path, api, nframes, pos, ori)
        w = m.stop()
        file_bytes = sum(os.stat(f).st_size for f in store_files(path))
        # as sciobench does: a first open, closed at once, before the drop (open_first_ms keeps
        # it), then up to OPEN_WARMUP_OPENS untimed ones in OPEN_WARMUP_SECONDS at most
        def open_handle():
            if api in ZARR_APIS:
                return zarr_open(path, api)
            return gsd.hoomd.open(path, "rb") if api == "hoomd" else gsd.fl.open(path, "rb")

        def close(handle):
            if api not in ZARR_APIS:
                handle.close()

        def open_close():
            close(open_handle())
        m = Meter("first open")
        open_close()
        first = m.stop()
        until = time.monotonic() + OPEN_WARMUP_SECONDS
        for _ in range(OPEN_WARMUP_OPENS):
            if time.monotonic() >= until:
                break
            open_close()
        drop1, resident = drop_cache(path, args.cache)
        m = Meter("open")
        handle = open_handle()
        o = m.stop()
        # as sciobench does: what the open cached is dropped too, so the read starts cold
        drop_open = drop_cache(path)[0] if args.cache == "cold" else 0.0
        try:
            got = (len(handle) if api == "hoomd" else
                   handle[0].shape[0] if api in ZARR_APIS else handle.nframes)
            if got != nframes:
                fail(f"{path}: {got} frames read back, {nframes} written", 1)
            read_latency = Histogram()
            m = Meter("read")
            read_verify = read_frames(handle, api, range(nread), pos, ori, path, read_latency)
            r = m.stop()
            drop2, _ = drop_cache(path, args.cache)
            order = shuffled_order(nframes, nread, Rng(args.seed + repeat))
            random_latency = Histogram()
            m = Meter("random")
            random_verify = read_frames(handle, api, order, pos, ori, path, random_latency)
            x = m.stop()
        finally:
            close(handle)
        return {
            "framing": FRAMING[api],
            "size_bytes": size,
            "N": n,
            "open_ms": num(o["wall"] * 1000, 4),
            "write_MiBps": num(data_bytes / MIB / w["wall"], 4),
            "read_MiBps": num(read_bytes / MIB / r["wall"], 4),
            "random_MiBps": num(read_bytes / MIB / x["wall"], 4),
            "random_ms": num(x["wall"] / nread * 1000, 3),
            "frames": nframes,
            "file_bytes": file_bytes,
            "repeat": repeat,
            "write_s": num(w["wall"]),
            "write_user_s": num(w["user"]),
            "write_sys_s": num(w["sys"]),
            "read_user_s": num(r["user"]),
            "read_sys_s": num(r["sys"]),
            "write_dev_bytes": w["dev_write"],
            "read_dev_bytes": r["dev_read"],
            "resident_after_drop": num(resident, 4),
            "fs_type": fs_type(scratch),
            "data_bytes": data_bytes,
            "read_frames": nread,
            "read_bytes": read_bytes,
            "read_s": num(r["wall"]),
            "random_s": num(x["wall"]),
            "random_user_s": num(x["user"]),
            "random_sys_s": num(x["sys"]),
            "random_dev_bytes": x["dev_read"],
            "drop_s": num(drop1 + drop_open + drop2),
            "write_user_ticks": w["user_ticks"],
            "write_sys_ticks": w["sys_ticks"],
            "clk_tck": CLK_TCK,
            "seed": args.seed,
            "write_sync_s": num(sync_s),
            "read_user_ticks": r["user_ticks"],
            "read_sys_ticks": r["sys_ticks"],
            "random_user_ticks": x["user_ticks"],
            "random_sys_ticks": x["sys_ticks"],
            "cache": args.cache,
            "fsync": "end",
            "cold_ok": "",  # sciobench judges it from the row (lib/workloads/table/cell.ts)
            "bs_bytes": 0,
            "direct": "false",
            "huge_pages": "false",
            "engine": "psync",
            "iodepth": 1,
            "open_dev_bytes": o["dev_read"],
            "open_first_ms": num(first["wall"] * 1000, 4),
            "read_verify_s": num(read_verify),
            "random_verify_s": num(random_verify),
            **read_latency.fields("read", r["wall"]),
            **random_latency.fields("random", x["wall"]),
            # python3-gsd's C library makes its reads: no pread of ours to time
            "read_call_p50_us": None, "read_call_p99_us": None,
            "random_call_p50_us": None, "random_call_p99_us": None,
            # sciobench judges each phase from the row (lib/workloads/table/cell.ts)
            "open_cold_ok": "",
            "read_cold_ok": "",
            "random_cold_ok": "",
            "cold_why": "",
            # sciobench derives these from the row (lib/workloads/table/mod.ts)
            "read_io_MiBps": "",
            "random_io_MiBps": "",
            "order": "",
            **{name: "" for name in METADATA_COLUMNS},
            "stat": "run",
            "error": "",
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# ---- command line ------------------------------------------------------------------------

UNITS = {"": 1, "B": 1, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
         "KB": 1000, "MB": 10**6, "GB": 10**9}


def parse_size(text):
    t = text.strip().upper()
    i = len(t)
    while i > 0 and not (t[i - 1].isdigit() or t[i - 1] == "."):
        i -= 1
    if t[i:] not in UNITS or not t[:i]:
        fail(f"bad size '{text}': expected a number with an optional unit B, KiB, MiB, GiB")
    return int(float(t[:i]) * UNITS[t[i:]])


def parse_count(text):
    try:
        if "^" in text:
            a, b = text.split("^")
            return int(a) ** int(b)
        return int(text)
    except ValueError:
        fail(f"bad count '{text}': expected an integer such as 1024 or 32^2")


def main():
    p = argparse.ArgumentParser(description="The sciobench GSD table with python3-gsd.")
    p.add_argument("--size", default="128MiB,1GiB")
    p.add_argument("--n", default="32^2,128^2,1024^2")
    p.add_argument("--dir", default=".")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--only-repeat", type=int, default=None,
                   help="run only this repeat (1-based; sets the random order), as sciobench does")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--warmup", action="store_true")
    p.add_argument("--sample", default="256MiB")
    p.add_argument("--cache", choices=["cold", "warm"], default="cold")
    p.add_argument("--api", choices=["hoomd", "fl", *ZARR_APIS], default="hoomd")
    p.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    p.add_argument("--no-header", action="store_true")
    args = p.parse_args()
    load(args.api)
    args.sample = parse_size(args.sample)
    if not os.path.isdir(args.dir):
        fail(f"--dir {args.dir} is not a directory")
    sizes = [parse_size(s) for s in args.size.split(",")]
    ns = [parse_count(s) for s in args.n.split(",")]
    if args.format == "csv" and not args.no_header:
        print(",".join(COLUMNS), flush=True)
    for size in sizes:
        for n in ns:
            reps = range(1, args.repeat + 1) if args.only_repeat is None else [args.only_repeat]
            for rep in reps:
                print(f"gsd_peer: {args.api} size={size} N={n} repeat={rep}", file=sys.stderr)
                row = run_cell(size, n, rep, args)
                if args.format == "csv":
                    cells = ("" if row[c] is None else str(row[c]) for c in COLUMNS)
                    print(",".join(cells), flush=True)
                else:
                    print(json.dumps({**row, "audit": TRAIL.finish()}), flush=True)


if __name__ == "__main__":
    main()
`;
