/**
 * The seeds' own Fortran programs, carried as source text so a compiled sciobench has them:
 * Packman's `wr` and `rd` (shared/seeds/001, lines 24-40), and an IOspeed-style F77 writer of n
 * datasets (FlexIO's writef77.f as ieeeio.md §3.5 reconstructs it). gfortran compiles them once
 * (compile.ts). Each keeps its seed's loop and adds only what sciobench needs:
 * file and sizes from the command line, a start barrier (it prints `ready` and waits for a line
 * on stdin), CLOCK_MONOTONIC and getrusage around open..close, and one JSON line of results.
 * @module
 */

/** Shared module: CLOCK_MONOTONIC, getrusage and command-line helpers through ISO_C_BINDING. */
const SYS_MODULE = `module sciosys
  use iso_c_binding
  implicit none
  type, bind(C) :: timespec
    integer(c_long) :: sec, nsec
  end type
  interface
    integer(c_int) function clock_gettime(id, ts) bind(C, name="clock_gettime")
      import :: c_int, timespec
      integer(c_int), value :: id
      type(timespec) :: ts
    end function
    integer(c_int) function getrusage(who, usage) bind(C, name="getrusage")
      import :: c_int, c_long
      integer(c_int), value :: who
      integer(c_long) :: usage(18)
    end function
  end interface
contains
  ! CLOCK_MONOTONIC (1) in nanoseconds, the clock sciobench reads
  integer(c_long) function now_ns()
    type(timespec) :: ts
    integer(c_int) :: rc
    rc = clock_gettime(1_c_int, ts)
    now_ns = ts%sec * 1000000000_c_long + ts%nsec
  end function
  ! user and system CPU seconds, blocks read and written (ru_inblock, ru_oublock) of this process
  subroutine cpu(user, sys, inblock, outblock)
    double precision, intent(out) :: user, sys
    integer(c_long), intent(out) :: inblock, outblock
    integer(c_long) :: u(18)
    integer(c_int) :: rc
    rc = getrusage(0_c_int, u)
    user = dble(u(1)) + dble(u(2)) * 1d-6
    sys = dble(u(3)) + dble(u(4)) * 1d-6
    inblock = u(12)
    outblock = u(13)
  end subroutine
  integer function iarg(k)
    integer, intent(in) :: k
    character(len=32) :: text
    call get_command_argument(k, text)
    read(text, *) iarg
  end function
  ! the start barrier: say ready, wait for the parent's line (or end of input)
  subroutine barrier()
    character(len=8) :: line
    integer :: ios
    write(*, '(a)') 'ready'
    flush(6)
    read(5, '(a)', iostat=ios) line
  end subroutine
end module
`;

/**
 * Packman's `rd` (seed 001 lines 32-40): reads `nrec` records of `n` doubles and stops on
 * `a(n) .ne. dble(i)`; with a pattern file (n-1 doubles, stream) every other element is checked
 * too. Usage: `rd FILE NREC N [PATTERN]`. Prints one JSON line (the ReaderReport of readers.ts).
 */
export const PACKMAN_RD = `${SYS_MODULE}
program rd
  use sciosys
  implicit none
  double precision, allocatable :: a(:), p(:)
  character(len=4096) :: path, pattern
  integer :: nrec, n, i, ii, bad
  integer(c_long) :: t0, t1, in0, in1, out0, out1
  double precision :: u0, s0, u1, s1
  logical :: whole
  call get_command_argument(1, path)
  nrec = iarg(2)
  n = iarg(3)
  call get_command_argument(4, pattern)
  whole = len_trim(pattern) > 0
  allocate(a(n), p(n))
  if (whole) then
    open(2, file=trim(pattern), form='unformatted', access='stream', status='old')
    read(2) (p(ii), ii=1,n-1)
    close(2)
  end if
  call barrier()
  call cpu(u0, s0, in0, out0)
  t0 = now_ns()
  open(1, file=trim(path), form='unformatted', status='old')
  do 10 i=1,nrec
    read(1) (a(ii), ii=1,n)
    if (a(n) .ne. dble(i)) then
      write(0,100) i, a(n)
100   format(' i=',i2,' bad value =',1pd12.5)
      error stop 1
    end if
    if (whole) then
      do ii=1,n-1
        if (a(ii) .ne. p(ii)) then
          bad = ii
          write(0,'(a,i0,a,i0,a)') ' record ', i, ' element ', bad, ' differs from the pattern'
          error stop 1
        end if
      end do
    end if
10 continue
  close(1)
  t1 = now_ns()
  call cpu(u1, s1, in1, out1)
  write(*,'(a,a,a,i0,a,i0,a,i0,a,i0,a,g0,a,g0,a,g0,a,i0,a)') '{"path":"', trim(path), &
    '","bytes":', int(nrec, c_long) * (int(n, c_long) * 8 + 8), ',"records":', nrec, &
    ',"t0Ns":', t0, ',"t1Ns":', t1, ',"wallS":', dble(t1 - t0) * 1d-9, ',"userS":', u1 - u0, &
    ',"sysS":', s1 - s0, ',"devReadBytes":', (in1 - in0) * 512, ',"warnings":[]}'
end program
`;

/**
 * Packman's `wr` (seed 001 lines 24-31): writes `nrec` records of `n` doubles with a(n) = i.
 * The seed leaves a(1:n-1) unset; with a pattern file they hold its values. Usage:
 * `wr FILE NREC N [PATTERN]` (the file must not exist: status='new', as the seed).
 */
export const PACKMAN_WR = `program wr
  implicit none
  double precision, allocatable :: a(:)
  character(len=4096) :: path, pattern
  character(len=32) :: text
  integer :: nrec, n, i, ii
  call get_command_argument(1, path)
  call get_command_argument(2, text)
  read(text, *) nrec
  call get_command_argument(3, text)
  read(text, *) n
  call get_command_argument(4, pattern)
  allocate(a(n))
  a = 0d0
  if (len_trim(pattern) > 0) then
    open(2, file=trim(pattern), form='unformatted', access='stream', status='old')
    read(2) (a(ii), ii=1,n-1)
    close(2)
  end if
  open(1, file=trim(path), form='unformatted', status='new')
  do 10 i=1,nrec
    a(n) = dble(i)
    write(1) (a(ii), ii=1,n)
10 continue
  close(1)
end program
`;

/**
 * IOspeed's F77 section (ieeeio.md §3.3, §3.5): open, `nds` unformatted WRITEs of one array of
 * `n` doubles (one record per dataset), close, all timed. Usage: `iospeed FILE NDS N [PATTERN]`.
 * Prints one JSON line: wall and CPU seconds, clock ticks, blocks written.
 */
export const IOSPEED_F77 = `${SYS_MODULE}
subroutine openf77(path)
  character(len=*), intent(in) :: path
  open(7, file=path, form='unformatted', status='replace')
end subroutine
subroutine writef77(data, n)
  integer, intent(in) :: n
  double precision, intent(in) :: data(n)
  write(7) data
end subroutine
subroutine closef77()
  close(7)
end subroutine
program iospeed
  use sciosys
  implicit none
  double precision, allocatable :: data(:)
  character(len=4096) :: path, pattern
  integer :: nds, n, k, ii
  integer(c_long) :: t0, t1, in0, in1, out0, out1
  double precision :: u0, s0, u1, s1
  call get_command_argument(1, path)
  nds = iarg(2)
  n = iarg(3)
  call get_command_argument(4, pattern)
  allocate(data(n))
  data = 0d0
  if (len_trim(pattern) > 0) then
    open(2, file=trim(pattern), form='unformatted', access='stream', status='old')
    read(2) (data(ii), ii=1,n)
    close(2)
  end if
  call barrier()
  call cpu(u0, s0, in0, out0)
  t0 = now_ns()
  call openf77(trim(path))
  do k=1,nds
    call writef77(data, n)
  end do
  call closef77()
  t1 = now_ns()
  call cpu(u1, s1, in1, out1)
  write(*,'(a,i0,a,i0,a,g0,a,g0,a,g0,a,i0,a)') '{"t0Ns":', t0, ',"t1Ns":', t1, &
    ',"wallS":', dble(t1 - t0) * 1d-9, ',"userS":', u1 - u0, ',"sysS":', s1 - s0, &
    ',"devWriteBytes":', (out1 - out0) * 512, '}'
end program
`;
