      program wr
      double precision a(130000)
      open(1,file='fort.1',form='unformatted',status='new')
      do 10 i=1,10
      a(130000)=dble(i)
      write(1)(a(ii),ii=1,130000)
   10 continue
      end
