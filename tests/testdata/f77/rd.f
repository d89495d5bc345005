      program rd
      double precision a(130000)
      integer nbad
      nbad=0
      open(1,file='fort.1',form='unformatted',status='old')
      do 10 i=1,10
      read(1)(a(ii),ii=1,130000)
      if (a(130000).ne.dble(i)) then
      write(0,100)i,a(130000)
      nbad=nbad+1
      end if
  100 format(' i=',i2,' bad value =',1pd12.5)
   10 continue
      if (nbad.gt.0) stop 1
      end
