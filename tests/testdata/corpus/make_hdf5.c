/* Writes an HDF5 file with every storage layout sciobench's `info` and `read` must describe:
 * contiguous, compact, chunked, chunked + shuffle + deflate, fletcher32, a scalar, an empty
 * extendible dataset, big-endian data, groups, a compound, strings (fixed and variable), enum,
 * opaque and vlen types, a hard link alias, a hard link cycle, soft links (one dangling) and an
 * external link. Data is a fixed pattern, so the file is the same every run.
 * Build: gcc -I/usr/include/hdf5/serial make_hdf5.c -lhdf5_serial; run: ./a.out FILE */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

static hid_t space(int rank, const hsize_t *dims) { return H5Screate_simple(rank, dims, NULL); }

static void put(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                const hsize_t *dims, hid_t dcpl, const void *data) {
  hid_t s = rank == 0 ? H5Screate(H5S_SCALAR) : space(rank, dims);
  hid_t d = H5Dcreate2(loc, name, ftype, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (data) H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(d);
  H5Sclose(s);
}

static hid_t chunked(int rank, const hsize_t *chunk) {
  hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(p, rank, chunk);
  return p;
}

int main(int argc, char **argv) {
  hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  double *d = malloc(100 * 37 * sizeof(double));
  for (int i = 0; i < 100 * 37; i++) d[i] = i * 0.5 - 7;
  hsize_t d2[2] = {100, 37};
  put(f, "contig_f64", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d2, H5P_DEFAULT, d);
  put(f, "be_f64", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 2, d2, H5P_DEFAULT, d);
  short s16[10];
  for (int i = 0; i < 10; i++) s16[i] = (short)(i * 1000 - 3000);
  hsize_t d1[1] = {10};
  hid_t compact = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(compact, H5D_COMPACT);
  put(f, "compact_i16", H5T_STD_I16LE, H5T_NATIVE_SHORT, 1, d1, compact, s16);
  float *f32 = malloc(200 * 50 * sizeof(float));
  for (int i = 0; i < 200 * 50; i++) f32[i] = (float)i / 3.0f;
  hsize_t fd[2] = {200, 50}, fc[2] = {64, 16};
  hid_t pc = chunked(2, fc);
  put(f, "chunked_f32", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, fd, pc, f32);
  int *i32 = malloc(300 * 40 * sizeof(int));
  for (int i = 0; i < 300 * 40; i++) i32[i] = (i % 97) * (i % 13);
  hsize_t id[2] = {300, 40}, ic[2] = {50, 40};
  hid_t pz = chunked(2, ic);
  H5Pset_shuffle(pz);
  H5Pset_deflate(pz, 6);
  put(f, "deflate_i32", H5T_STD_I32LE, H5T_NATIVE_INT, 2, id, pz, i32);
  unsigned char u8[1000];
  for (int i = 0; i < 1000; i++) u8[i] = (unsigned char)(i * 7);
  hsize_t ud[1] = {1000}, uc[1] = {128};
  hid_t pf = chunked(1, uc);
  H5Pset_fletcher32(pf);
  put(f, "fletcher_u8", H5T_STD_U8LE, H5T_NATIVE_UCHAR, 1, ud, pf, u8);
  double scalar = 42.25;
  put(f, "scalar_f64", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, H5P_DEFAULT, &scalar);
  hsize_t ed[2] = {0, 5}, emax[2] = {H5S_UNLIMITED, 5}, ec[2] = {8, 5};
  hid_t es = H5Screate_simple(2, ed, emax);
  hid_t pe = chunked(2, ec);
  hid_t e = H5Dcreate2(f, "empty_i8", H5T_STD_I8LE, es, H5P_DEFAULT, pe, H5P_DEFAULT);
  H5Dclose(e);
  H5Sclose(es);

  hid_t g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t sub = H5Gcreate2(g, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  unsigned long long u64[2 * 3 * 4];
  for (int i = 0; i < 24; i++) u64[i] = 0xfedcba9876543210ULL ^ (unsigned long long)i;
  hsize_t ud3[3] = {2, 3, 4};
  put(sub, "u64", H5T_STD_U64LE, H5T_NATIVE_ULLONG, 3, ud3, H5P_DEFAULT, u64);
  long long i64[5] = {-1, 0, 1, -9000000000LL, 9000000000LL};
  hsize_t d5[1] = {5};
  put(sub, "i64", H5T_STD_I64BE, H5T_NATIVE_LLONG, 1, d5, H5P_DEFAULT, i64);
  unsigned short u16[5] = {0, 1, 65535, 300, 7};
  put(sub, "u16", H5T_STD_U16LE, H5T_NATIVE_USHORT, 1, d5, H5P_DEFAULT, u16);

  typedef struct { int a; double b; } pair;
  pair pairs[4] = {{1, 1.5}, {2, 2.5}, {3, 3.5}, {4, 4.5}};
  hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(pair));
  H5Tinsert(ct, "a", HOFFSET(pair, a), H5T_NATIVE_INT);
  H5Tinsert(ct, "b", HOFFSET(pair, b), H5T_NATIVE_DOUBLE);
  hsize_t d4[1] = {4};
  put(g, "compound", ct, ct, 1, d4, H5P_DEFAULT, pairs);
  const char *words[3] = {"alpha", "be", "gamma ray"};
  hid_t vs = H5Tcopy(H5T_C_S1);
  H5Tset_size(vs, H5T_VARIABLE);
  hsize_t d3[1] = {3};
  put(g, "vstr", vs, vs, 1, d3, H5P_DEFAULT, words);
  hid_t fs = H5Tcopy(H5T_C_S1);
  H5Tset_size(fs, 8);
  put(g, "fixedstr", fs, fs, 1, d3, H5P_DEFAULT, "abcdefghijklmnopqrstuvwx");
  hid_t et = H5Tenum_create(H5T_NATIVE_INT);
  int v0 = 0, v1 = 1;
  H5Tenum_insert(et, "RED", &v0);
  H5Tenum_insert(et, "GREEN", &v1);
  int colors[3] = {0, 1, 0};
  put(g, "enum", et, et, 1, d3, H5P_DEFAULT, colors);
  hid_t ot = H5Tcreate(H5T_OPAQUE, 4);
  H5Tset_tag(ot, "four bytes");
  put(g, "opaque", ot, ot, 1, d3, H5P_DEFAULT, "0123456789ab");
  hid_t vt = H5Tvlen_create(H5T_NATIVE_INT);
  int va[1] = {5}, vb[2] = {6, 7};
  hvl_t vl[2] = {{1, va}, {2, vb}};
  hsize_t dv[1] = {2};
  put(g, "vlen_int", vt, vt, 1, dv, H5P_DEFAULT, vl);

  H5Lcreate_hard(f, "contig_f64", f, "alias_contig", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_hard(f, "/", sub, "back_to_root", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_soft("/grp/sub/u64", f, "soft_u64", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_soft("/nowhere", f, "dangling", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_external("other.h5", "/x", f, "external", H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(sub);
  H5Gclose(g);
  return H5Fclose(f) < 0;
}
