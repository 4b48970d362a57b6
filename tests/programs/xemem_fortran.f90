! XEMEM from Fortran through xpmem.h's C ABI (bind(C)): an array exported,
! attached and changed through the attachment, N times; the same binary in
! an enclave and on Linux.  xemem_fortran N
module xpmem
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int), parameter :: XPMEM_RDWR = 2, XPMEM_PERMIT_MODE = 1

  type, bind(c) :: xpmem_addr
    integer(c_int64_t) :: apid
    integer(c_int64_t) :: offset
  end type

  interface
    integer(c_int64_t) function xpmem_make(vaddr, size, permit_type, permit_value) bind(c)
      import :: c_int64_t, c_ptr, c_size_t, c_int, c_intptr_t
      type(c_ptr), value :: vaddr
      integer(c_size_t), value :: size
      integer(c_int), value :: permit_type
      integer(c_intptr_t), value :: permit_value
    end function
    integer(c_int64_t) function xpmem_get(segid, flags, permit_type, permit_value) bind(c)
      import :: c_int64_t, c_ptr, c_int
      integer(c_int64_t), value :: segid
      integer(c_int), value :: flags, permit_type
      type(c_ptr), value :: permit_value
    end function
    type(c_ptr) function xpmem_attach(addr, size, vaddr) bind(c)
      import :: xpmem_addr, c_ptr, c_size_t
      type(xpmem_addr), value :: addr
      integer(c_size_t), value :: size
      type(c_ptr), value :: vaddr
    end function
    integer(c_int) function xpmem_detach(vaddr) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: vaddr
    end function
    integer(c_int) function xpmem_release(apid) bind(c)
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: apid
    end function
    integer(c_int) function xpmem_remove(segid) bind(c)
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: segid
    end function
    type(c_ptr) function aligned_alloc(alignment, size) bind(c)
      import :: c_ptr, c_size_t
      integer(c_size_t), value :: alignment, size
    end function
  end interface
end module

program xemem_fortran
  use xpmem
  implicit none
  integer, parameter :: count = 64 * 4096 / 8
  integer(c_size_t), parameter :: bytes = count * 8
  integer(c_int64_t), pointer :: base(:), seen(:)
  integer(c_int64_t) :: seg, apid, i, n, expected
  type(c_ptr) :: mem, at
  character(len=32) :: arg
  integer :: k

  n = 10
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  do i = 0, n - 1
    ! Page-aligned storage, as xpmem_make wants.
    mem = aligned_alloc(4096_c_size_t, bytes)
    call c_f_pointer(mem, base, [count])
    base = [(i + k, k = 0, count - 1)]
    seg = xpmem_make(mem, bytes, XPMEM_PERMIT_MODE, int(o'600', c_intptr_t))
    apid = xpmem_get(seg, XPMEM_RDWR, XPMEM_PERMIT_MODE, c_null_ptr)
    at = xpmem_attach(xpmem_addr(apid, 0), bytes, c_null_ptr)
    if (seg < 0 .or. apid < 0 .or. transfer(at, 0_c_intptr_t) == -1) then
      print '(a)', 'xemem_fortran: make, get or attach failed'
      stop 1
    end if
    call c_f_pointer(at, seen, [count])
    expected = count * i + int(count, c_int64_t) * (count - 1) / 2
    seen(8) = -1  ! the very same memory
    if (sum(seen) /= expected - 7 - i - 1 .or. base(8) /= -1) then
      print '(a,i0)', 'xemem_fortran: FAIL in round ', i
      stop 1
    end if
    if (xpmem_detach(at) /= 0 .or. xpmem_release(apid) /= 0 .or. xpmem_remove(seg) /= 0) then
      print '(a,i0)', 'xemem_fortran: FAIL to let go in round ', i
      stop 1
    end if
    call free_c(mem)
  end do
  print '(a,i0,a)', 'xemem_fortran: ', n, ' rounds through xpmem.h from Fortran: ok'
contains
  subroutine free_c(p)
    type(c_ptr), value :: p
    interface
      subroutine free(q) bind(c)
        import :: c_ptr
        type(c_ptr), value :: q
      end subroutine
    end interface
    call free(p)
  end subroutine
end program
