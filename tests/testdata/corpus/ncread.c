/* The reference reader for the corpus test: opens a netCDF file (any format) with libnetcdf and
 * prints, for every variable of every group, one line:
 *   name<TAB>xtype<TAB>bytes<TAB>crc32 of the data in native order<TAB>crc32 big-endian
 * (name with its group path, no leading '/'; bytes and CRCs -1 for types that are not atomic
 * numbers or char). Data read with nc_get_var, as ncdump reads it.
 * Build: gcc ncread.c -lnetcdf -lz; run: ./a.out FILE */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};

static void group(int ncid, const char *prefix) {
  int nvars, varids[NC_MAX_VARS];
  nc_inq_varids(ncid, &nvars, varids);
  for (int k = 0; k < nvars; k++) {
    char name[NC_MAX_NAME + 1];
    nc_type xtype;
    int ndims, dimids[NC_MAX_VAR_DIMS];
    nc_inq_var(ncid, varids[k], name, &xtype, &ndims, dimids, NULL);
    if (xtype < 1 || xtype > 11) {
      printf("%s%s\t%d\t-1\t-1\t-1\n", prefix, name, xtype);
      continue;
    }
    size_t n = 1;
    for (int d = 0; d < ndims; d++) {
      size_t len;
      nc_inq_dimlen(ncid, dimids[d], &len);
      n *= len;
    }
    size_t bytes = n * sizes[xtype];
    unsigned char *buf = calloc(1, bytes ? bytes : 1); /* unwritten, unfilled data: zeros */
    if (n > 0 && nc_get_var(ncid, varids[k], buf) != NC_NOERR) {
      printf("%s%s\t%d\tERROR\n", prefix, name, xtype);
      continue;
    }
    unsigned long native = crc32(0L, buf, (uInt)bytes);
    int w = sizes[xtype];
    for (size_t i = 0; w > 1 && i < bytes; i += w)
      for (int a = 0, b = w - 1; a < b; a++, b--) {
        unsigned char t = buf[i + a];
        buf[i + a] = buf[i + b];
        buf[i + b] = t;
      }
    unsigned long big = crc32(0L, buf, (uInt)bytes);
    printf("%s%s\t%d\t%zu\t%08lx\t%08lx\n", prefix, name, xtype, bytes, native, big);
    free(buf);
  }
  int ngrps, grps[1024];
  if (nc_inq_grps(ncid, &ngrps, grps) != NC_NOERR) return;
  for (int g = 0; g < ngrps; g++) {
    char name[NC_MAX_NAME + 1], path[4096];
    nc_inq_grpname(grps[g], name);
    snprintf(path, sizeof path, "%s%s/", prefix, name);
    group(grps[g], path);
  }
}

int main(int argc, char **argv) {
  int ncid, status = nc_open(argv[1], NC_NOWRITE, &ncid);
  if (status != NC_NOERR) {
    fprintf(stderr, "%s: %s\n", argv[1], nc_strerror(status));
    return 1;
  }
  group(ncid, "");
  return nc_close(ncid) != NC_NOERR;
}
