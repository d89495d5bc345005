# Writes a gsd file with chunk names of no schema (python3-gsd 2.7): types float64, int32, uint16
# and uint8, a chunk missing from one frame. Run: /usr/bin/python3 make_gsd.py FILE
import sys, gsd.fl, numpy as np
with gsd.fl.open(name=sys.argv[1], mode='wb', application='corpus', schema='my_schema', schema_version=[1, 2]) as f:
    for frame in range(3):
        f.write_chunk(name='a', data=np.arange(10 + frame, dtype=np.float64))
        f.write_chunk(name='some/deep/name', data=np.arange(12, dtype=np.int32).reshape(4, 3) * frame)
        if frame != 1:
            f.write_chunk(name='only_even', data=np.array([frame], dtype=np.uint16))
        f.write_chunk(name='text', data=np.frombuffer(b'hello', dtype=np.uint8))
        f.end_frame()
