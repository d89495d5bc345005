/* Writes an HDF4 file of scientific data sets (SD interface) of every number type sciobench
 * reads, named and with the library's default name (an empty name), of different ranks and
 * shapes, one chunked, one deflate-compressed, one with attributes, so that nothing repeats by
 * name: each SDS is one frame. Build: gcc -I/usr/include/hdf make_hdf4.c -lmfhdf -ldf; run:
 * ./a.out FILE */
#include <mfhdf.h>
#include <string.h>

static void put(int32 sd, const char *name, int32 type, int32 rank, int32 *dims, void *data,
                int how) {
  int32 id = SDcreate(sd, name, type, rank, dims);
  if (how == 1) {
    comp_info c;
    c.deflate.level = 6;
    SDsetcompress(id, COMP_CODE_DEFLATE, &c);
  } else if (how == 2) {
    HDF_CHUNK_DEF def;
    memset(&def, 0, sizeof def);
    for (int k = 0; k < rank; k++) def.chunk_lengths[k] = dims[k] > 4 ? dims[k] / 4 : 1;
    SDsetchunk(id, def, HDF_CHUNK);
  }
  int32 start[8] = {0};
  SDwritedata(id, start, NULL, dims, data);
  if (how == 3) {
    float64 scale = 0.5;
    SDsetattr(id, "scale", DFNT_FLOAT64, 1, &scale);
    SDsetattr(id, "units", DFNT_CHAR8, 6, "meters");
  }
  SDendaccess(id);
}

int main(int argc, char **argv) {
  int32 sd = SDstart(argv[1], DFACC_CREATE);
  float64 d[6 * 7];
  for (int i = 0; i < 42; i++) d[i] = i * 1.25 - 3;
  int32 d2[2] = {6, 7};
  put(sd, "doubles", DFNT_FLOAT64, 2, d2, d, 0);
  float32 f[100];
  for (int i = 0; i < 100; i++) f[i] = i / 7.0f;
  int32 d1[1] = {100};
  put(sd, "", DFNT_FLOAT32, 1, d1, f, 0);
  int32 i32[4 * 5 * 6];
  for (int i = 0; i < 120; i++) i32[i] = i * 1000 - 50000;
  int32 d3[3] = {4, 5, 6};
  put(sd, "ints deflated", DFNT_INT32, 3, d3, i32, 1);
  int16 i16[64];
  for (int i = 0; i < 64; i++) i16[i] = (int16)(i * 300 - 9000);
  int32 d8[2] = {8, 8};
  put(sd, "shorts chunked", DFNT_INT16, 2, d8, i16, 2);
  uint8 u8[10] = {0, 1, 2, 3, 250, 251, 252, 253, 254, 255};
  int32 d10[1] = {10};
  put(sd, "bytes with attributes", DFNT_UINT8, 1, d10, u8, 3);
  int8 i8[10] = {-128, -1, 0, 1, 127, 5, 6, 7, 8, 9};
  put(sd, "", DFNT_INT8, 1, d10, i8, 0);
  uint16 u16[10];
  uint32 u32[10];
  for (int i = 0; i < 10; i++) {
    u16[i] = (uint16)(65535 - i);
    u32[i] = 4294967295u - (uint32)i;
  }
  put(sd, "uint16", DFNT_UINT16, 1, d10, u16, 0);
  put(sd, "uint32", DFNT_UINT32, 1, d10, u32, 0);
  return SDend(sd) == FAIL;
}
