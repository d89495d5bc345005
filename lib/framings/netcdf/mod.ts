/**
 * netCDF classic files (CDF-1 classic, CDF-2 64-bit offset, CDF-5 64-bit data): a native writer
 * that lays files out exactly as netCDF-C 4.9 does, and a validating reader.
 *
 * Layout (everything big-endian): `CDF` + version byte, numrecs, the dimension, global attribute
 * and variable lists, then the data of the fixed-size variables one after another, then the
 * records: record r holds the r-th slab of every record variable in header order, each padded
 * to 4 bytes with the variable's fill value (no padding when there is a single record variable).
 *
 * Frame mapping: each frame is one record; each chunk is one record variable with dimensions
 * (record, ...chunk shape). Dimensions are shared by length and named `n<length>`; the record
 * dimension is `record`. A chunk name that is not a valid netCDF name (`particles/position`)
 * becomes a valid one (`particles_position`) and the original is kept in the variable attribute
 * `chunk_name`, which the reader uses as the chunk name. A file without records reads
 * as one frame of its fixed variables.
 *
 * Appending (`appendWriter`) continues any classic file with record variables, ours or the
 * library's, byte for byte as netCDF-C's `nc_open(NC_WRITE)` + `nc_put_vara` at records numrecs..
 * with fill on: each frame is one more record, numrecs is rewritten at the end.
 * @module
 */
import type { ByteSource, FrameIndex, FrameWriter, Framing, WriterOptions } from "../types.ts";
import { FORMAT } from "./model.ts";
import { NETCDF_OPTIONS } from "./schema.ts";
import { NetcdfIndex } from "./index.ts";
import { createNetcdfWriter, netcdfAppendWriter } from "./writer.ts";

export type {
  NcAttribute,
  NcDimension,
  NcLayout,
  NcSchema,
  NcType,
  NcValues,
  NcVariable,
  NcVariant,
  NcVarLayout,
} from "./model.ts";
export {
  DTYPE_NC_TYPE,
  encodeValues,
  fillBytes,
  isCdf5Type,
  NC_MAX_NAME,
  NC_TYPE_CODE,
  NC_TYPE_DTYPE,
  ncTypeSize,
  STREAMING_NUMRECS,
} from "./model.ts";
export type { NcDecodedAttribute, NcDecodedVariable, NcHeader } from "./header_decode.ts";
export { decodeHeader } from "./header_decode.ts";
export { encodeFile, encodeHeader, layoutSchema, numrecsBytes } from "./header_encode.ts";
export type { NcFile } from "./reader.ts";
export { openNetcdf } from "./reader.ts";
export type { NcChunkSpec, NetcdfWriterOptions } from "./schema.ts";
export {
  CHUNK_NAME_ATTR,
  NETCDF_OPTIONS,
  netcdfName,
  netcdfNameProblem,
  schemaForChunks,
} from "./schema.ts";
export { createNetcdfWriter, netcdfAppendWriter } from "./writer.ts";

/**
 * The netCDF classic framing (`netcdf`): big-endian, one record per frame. Writer options:
 * `variant` (1, 2, 5), `numrecs` (`close` | `frame`), `fill` (boolean), `recordDim`, `chunks`,
 * `attributes` (see {@link NetcdfWriterOptions}). Appends along the record dimension (see
 * {@link netcdfAppendWriter}).
 */
export const netcdf: Framing = {
  name: FORMAT,
  description:
    "netCDF classic (CDF-1, CDF-2 64-bit offset, CDF-5), one record per frame, big-endian",
  orders: ["big"],
  options: NETCDF_OPTIONS,
  // Any version byte after "CDF" is claimed, so an unknown version gets the reader's precise error.
  magic: [{ bytes: [0x43, 0x44, 0x46] }],
  sharedLayout: true,
  createWriter(options: WriterOptions = {}): FrameWriter {
    return createNetcdfWriter(options);
  },
  appendWriter: netcdfAppendWriter,
  openIndex(source: ByteSource): FrameIndex {
    return new NetcdfIndex(source);
  },
};
