/**
 * The calls netCDF-C (`nc_*`, serial and parallel) and PnetCDF (`ncmpi_*`) share, as the peers'
 * bindings type them: the same parameters but for the type of their size cells (`S`: size_t as
 * BigUint64Array in netCDF-C, MPI_Offset as BigInt64Array in PnetCDF).
 * @module
 */

/** A size cell array of one of the libraries: size_t (netCDF-C) or MPI_Offset (PnetCDF). */
export type NcSizes = BigInt64Array | BigUint64Array;

/** The shared calls, each taking the open file's id first; every one returns the status. */
export interface NcCalls<S extends NcSizes> {
  /** nc_def_dim: defines dimension `name` of `length` (0: unlimited); its id in `id`. */
  defDim(ncid: number, name: Uint8Array, length: bigint, id: Int32Array): number;
  /** nc_def_var: defines variable `name` of `type` over `ndims` dimensions `dims`; its id in `id`. */
  defVar(
    ncid: number,
    name: Uint8Array,
    type: number,
    ndims: number,
    dims: Int32Array,
    id: Int32Array,
  ): number;
  /** nc_put_att_text: attribute `name` of `varid`, `length` bytes of `text`. */
  putAttText(
    ncid: number,
    varid: number,
    name: Uint8Array,
    length: bigint,
    text: Uint8Array,
  ): number;
  /** nc_inq: the counts of dimensions, variables and global attributes, the unlimited dimension. */
  inq(
    ncid: number,
    ndims: Int32Array,
    nvars: Int32Array,
    natts: Int32Array,
    unlimited: Int32Array,
  ): number;
  /** nc_inq_dimlen: the length of dimension `dimid`. */
  inqDimlen(ncid: number, dimid: number, length: S): number;
  /** nc_inq_var: variable `varid`'s name, type, dimensions and attribute count. */
  inqVar(
    ncid: number,
    varid: number,
    name: Uint8Array,
    type: Int32Array,
    ndims: Int32Array,
    dims: Int32Array,
    natts: Int32Array,
  ): number;
  /** nc_inq_att: attribute `name` of `varid`: its type and length. */
  inqAtt(ncid: number, varid: number, name: Uint8Array, type: Int32Array, length: S): number;
  /** nc_get_att_text: attribute `name` of `varid` as text. */
  getAttText(ncid: number, varid: number, name: Uint8Array, text: Uint8Array): number;
}
