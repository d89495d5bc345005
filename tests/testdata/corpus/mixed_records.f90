! Writes mixed.f77, unformatted sequential records of mixed lengths (3 integers, 100 doubles,
! an 11-character string, an empty record, 7 reals and an integer, 50 doubles), then reads it
! back with the same types and writes each record's payload to recordN.bin (stream access):
! the gfortran reference for the corpus test. Build: gfortran mixed_records.f90.
program mixed_records
  implicit none
  integer :: i, ints(3), i1
  double precision :: d(100), d50(50)
  character(len=11) :: s
  real :: r(7)
  ints = (/ 1, -2, 3 /)
  do i = 1, 100
    d(i) = i * 0.25d0
  end do
  do i = 1, 7
    r(i) = i * 1.5
  end do
  s = 'hello world'
  open(10, file='mixed.f77', form='unformatted', access='sequential', status='replace')
  write(10) ints
  write(10) d
  write(10) s
  write(10)
  write(10) r, ints(1)
  write(10) d(1:50)
  close(10)
  ints = 0; d = 0; s = ''; r = 0
  open(10, file='mixed.f77', form='unformatted', access='sequential', status='old')
  read(10) ints
  call dump(1)
  write(11) ints
  close(11)
  read(10) d
  call dump(2)
  write(11) d
  close(11)
  read(10) s
  call dump(3)
  write(11) s
  close(11)
  read(10)
  call dump(4)
  close(11)
  read(10) r, i1
  call dump(5)
  write(11) r, i1
  close(11)
  read(10) d50
  call dump(6)
  write(11) d50
  close(11)
  close(10)
contains
  subroutine dump(n)
    integer, intent(in) :: n
    character(len=32) :: name
    write(name, '(a,i0,a)') 'record', n, '.bin'
    open(11, file=trim(name), form='unformatted', access='stream', status='replace')
  end subroutine
end program
