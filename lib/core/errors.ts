/**
 * Typed errors of sciobench. Each carries the process exit code the CLI uses:
 * 2 for bad usage or a malformed file, 1 for an I/O or verification failure.
 * @module
 */

/**
 * Control characters (C0, DEL and C1, such as ESC and the 8-bit CSI) shown as escapes (`\n`,
 * `\x1b`), so a text from a file or a library stays one line and cannot drive the terminal.
 * The one escaping every error, warning, table, CSV and info line goes through.
 */
export function escapeControls(text: string): string {
  return text.replace(
    // deno-lint-ignore no-control-regex
    /[\x00-\x1f\x7f-\x9f]/g,
    (c) =>
      c === "\n"
        ? "\\n"
        : c === "\t"
        ? "\\t"
        : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

/** Base class of every error sciobench raises on purpose; `exitCode` is the CLI exit code. */
export class SciobenchError extends Error {
  /** Exit code the CLI returns for this error (1 or 2). */
  readonly exitCode: number;
  constructor(message: string, exitCode: number, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** A bad flag, option value or command line; exit code 2. */
export class UsageError extends SciobenchError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** A file that does not follow its format; names the file and the byte offset; exit code 2. */
export class FormatError extends SciobenchError {
  /** Path of the malformed file ("" when decoding bytes in memory). */
  readonly path: string;
  /** Byte offset in the file where the problem was found, or -1 when unknown. */
  readonly offset: number;
  constructor(format: string, path: string, offset: number, problem: string) {
    const where = offset >= 0 ? ` at byte ${offset}` : "";
    // Names read from a damaged file may hold any byte: the message stays one line.
    super(escapeControls(`${format}: ${path || "<bytes>"}${where}: ${problem}`), 2);
    this.path = path;
    this.offset = offset;
  }
}

/**
 * A byte source (file or memory) that ends before the bytes a decoder asked for: a FormatError
 * labelled with `source` (`file`, `read`) that the engine relabels with the framing's name,
 * keeping the offset and the problem.
 */
export class ShortReadError extends FormatError {
  /** What is missing, without the file and offset (`need 16 bytes at byte 40 but ...`). */
  readonly problem: string;
  constructor(source: string, path: string, offset: number, problem: string) {
    super(source, path, offset, problem);
    this.problem = problem;
  }
}

/** A failed libc call; carries errno, its symbolic name and the path involved; exit code 1. */
export class SysError extends SciobenchError {
  /** The C errno value. */
  readonly errno: number;
  /** Symbolic errno name such as `ENOENT`. */
  readonly code: string;
  /** The libc function that failed. */
  readonly call: string;
  /** Path of the file involved, or "" when none. */
  readonly path: string;
  constructor(call: string, errno: number, code: string, path: string, detail = "") {
    const target = path ? ` ${path}` : "";
    super(`${call}${target}: ${code} (errno ${errno})${detail ? `: ${detail}` : ""}`, 1);
    this.errno = errno;
    this.code = code;
    this.call = call;
    this.path = path;
  }
}

/** Data read back differs from what was written; names file, frame, chunk and offset; exit code 1. */
export class VerifyError extends SciobenchError {
  constructor(message: string) {
    super(message, 1);
  }
}

/** An I/O failure that is not a single libc call (short write, missing file, refused overwrite); exit code 1. */
export class IoError extends SciobenchError {
  constructor(message: string) {
    super(message, 1);
  }
}

/**
 * This rank stopped only because another rank failed inside a collective step (a shared file):
 * a fenced phase (lib/mpi/phase.ts) reports the rank that failed first-hand, not this one.
 */
export class PeerRankFailed extends IoError {}

/** An optional peer library or tool is not installed; the run skips it with this message; exit code 1. */
export class PeerUnavailableError extends SciobenchError {
  constructor(message: string) {
    super(message, 1);
  }
}

/** Some cells of a sweep failed (each row says why in its `error` column); exit code 1. */
export class CellsFailedError extends SciobenchError {
  constructor(message: string) {
    super(message, 1);
  }
}

/** `compare --fail-on regression` found a significant regression beyond the threshold; exit 1. */
export class RegressionFoundError extends SciobenchError {
  constructor(message: string) {
    super(message, 1);
  }
}
