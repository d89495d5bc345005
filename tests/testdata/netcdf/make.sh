#!/bin/sh
# Regenerates the golden netCDF classic files from their CDL with the real ncgen (netcdf-bin,
# netCDF-C 4.9.0 on Debian 12): cd tests/testdata/netcdf && sh make.sh
set -eu
ncgen -k classic -o demo1.nc demo.cdl
ncgen -k 64-bit-offset -o demo2.nc demo.cdl
ncgen -k cdf5 -o demo5.nc demo.cdl
ncgen -k classic -o types1.nc types.cdl
ncgen -k 64-bit-offset -o types2.nc types.cdl
ncgen -k cdf5 -o types5.nc types.cdl
# ncgen 4.9.0 turns int64 variables into int in CDF-5 output, so this one goes through netCDF-4
# and nccopy (the real library writes the CDF-5 file).
ncgen -k nc4 -o cdf5types.tmp.nc cdf5types.cdl
nccopy -k cdf5 cdf5types.tmp.nc cdf5types.nc
rm -f cdf5types.tmp.nc
ncgen -k classic -o single1.nc single.cdl
ncgen -k cdf5 -o single5.nc single.cdl
ncgen -k classic -o single3.nc single3.cdl
ncgen -k classic -o empty1.nc empty.cdl
ncgen -k 64-bit-offset -o fixed2.nc fixed.cdl
ncgen -k classic -o frames1.nc frames.cdl
ncgen -k 64-bit-offset -o frames2.nc frames.cdl
ncgen -k classic -o records1.nc records.cdl
ncgen -k cdf5 -o records5.nc records.cdl
