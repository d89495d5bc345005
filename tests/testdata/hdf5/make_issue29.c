/*
 * Valid HDF5 files, made by the HDF5 library itself, that a reader must handle in time
 * proportional to what they store (tests/hdf5_files_test.ts compiles and runs this):
 *   make_issue29 KIND FILE [ARG]
 * KIND: sparse_frames (an extendible float32 dataset of 1000 frames of 1 MiB, fill time never,
 *       nothing written), sparse_block (a fixed 1 GiB int8 chunked dataset never written),
 *       many_sparse (ARG chunked 1 GiB datasets never written), partial (4 chunks, 1 written),
 *       many (ARG one-element datasets in the root group), longname (a dataset whose name has
 *       66560 bytes), null (a dataset with a NULL dataspace beside a written one),
 *       extlink (an external link to file ARG), extraw (a dataset stored in external file ARG),
 *       small (one written 1-D dataset in a group: to be damaged by a test).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
  fprintf(stderr, "make_issue29: %s failed\n", what);
  exit(1);
}

static hid_t chunked(hid_t file, const char *name, hid_t type, int rank, const hsize_t *dims,
                     const hsize_t *max, const hsize_t *chunk, int never) {
  hid_t space = H5Screate_simple(rank, dims, max);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (H5Pset_chunk(dcpl, rank, chunk) < 0) die("H5Pset_chunk");
  if (never && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0) die("H5Pset_fill_time");
  hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) die("H5Dcreate2");
  H5Pclose(dcpl);
  H5Sclose(space);
  return d;
}

int main(int argc, char **argv) {
  if (argc < 3) die("arguments");
  const char *kind = argv[1];
  long n = argc > 3 ? atol(argv[3]) : 0;
  hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) die("H5Fcreate");
  if (!strcmp(kind, "sparse_frames")) {
    hid_t g = H5Gcreate2(file, "particles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[3] = {1000, 87382, 3}, max[3] = {H5S_UNLIMITED, 87382, 3}, ch[3] = {1, 87382, 3};
    H5Dclose(chunked(g, "position", H5T_NATIVE_FLOAT, 3, dims, max, ch, 1));
    H5Gclose(g);
  } else if (!strcmp(kind, "sparse_block") || !strcmp(kind, "many_sparse")) {
    hsize_t dims[1] = {1u << 30}, ch[1] = {1u << 20};
    long count = !strcmp(kind, "many_sparse") ? n : 1;
    for (long i = 0; i < count; i++) {
      char name[32];
      snprintf(name, sizeof name, "sparse%ld", i);
      H5Dclose(chunked(file, name, H5T_NATIVE_SCHAR, 1, dims, NULL, ch, 0));
    }
  } else if (!strcmp(kind, "partial")) {
    hsize_t dims[1] = {4096}, ch[1] = {1024}, start[1] = {0};
    hid_t d = chunked(file, "partial", H5T_NATIVE_INT, 1, dims, NULL, ch, 0);
    int buf[1024];
    for (int i = 0; i < 1024; i++) buf[i] = i;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, ch, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, ch, NULL);
    if (H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) < 0) die("H5Dwrite");
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
  } else if (!strcmp(kind, "many")) {
    hsize_t one[1] = {1};
    hid_t space = H5Screate_simple(1, one, NULL);
    for (long i = 0; i < n; i++) {
      char name[32];
      snprintf(name, sizeof name, "d%06ld", i);
      hid_t d = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT);
      int v = (int)i;
      if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0) {
        die("H5Dwrite");
      }
      H5Dclose(d);
    }
    H5Sclose(space);
  } else if (!strcmp(kind, "longname")) {
    size_t len = 66560;
    char *name = malloc(len + 1);
    memset(name, 'x', len);
    name[len] = 0;
    hsize_t one[1] = {4};
    hid_t space = H5Screate_simple(1, one, NULL);
    hid_t d = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    int v[4] = {1, 2, 3, 4};
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
      die("longname");
    }
    H5Dclose(d);
    H5Sclose(space);
    free(name);
  } else if (!strcmp(kind, "null")) {
    hid_t space = H5Screate(H5S_NULL);
    hid_t d = H5Dcreate2(file, "nothing", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    if (d < 0) die("null dataset");
    H5Dclose(d);
    H5Sclose(space);
    hsize_t two[1] = {2};
    space = H5Screate_simple(1, two, NULL);
    d = H5Dcreate2(file, "two", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int v[2] = {7, 8};
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) die("two");
    H5Dclose(d);
    H5Sclose(space);
  } else if (!strcmp(kind, "extlink")) {
    if (argc < 4 || H5Lcreate_external(argv[3], "/x", file, "ext", H5P_DEFAULT, H5P_DEFAULT) < 0) {
      die("H5Lcreate_external");
    }
  } else if (!strcmp(kind, "extraw")) {
    hsize_t dims[1] = {256};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (argc < 4 || H5Pset_external(dcpl, argv[3], 0, 256 * sizeof(int)) < 0) {
      die("H5Pset_external");
    }
    hid_t d = H5Dcreate2(file, "raw", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) die("external dataset");
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
  } else if (!strcmp(kind, "small")) {
    hid_t g = H5Gcreate2(file, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[1] = {16};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(g, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    int v[16];
    for (int i = 0; i < 16; i++) v[i] = i * i;
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) die("small");
    H5Dclose(d);
    H5Sclose(space);
    H5Gclose(g);
  } else {
    die(kind);
  }
  if (H5Fclose(file) < 0) die("H5Fclose");
  return 0;
}
