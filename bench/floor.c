// The physical floor of one locked, verified append, for bench/run.py: read config, mkdir lock,
// utimes, read inbox, write temp with the new entry spliced in, fsync, rename, fsync dir, read
// back, rmdir. Argument: a team folder with a member alice. No checks beyond what a correct
// writer needs; `teamctl send` is measured against it, paired run by run.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>
static char *slurp(const char *p, size_t *n){int fd=open(p,O_RDONLY);if(fd<0)return 0;struct stat st;fstat(fd,&st);char*b=malloc(st.st_size+1);size_t r=0;while(r<(size_t)st.st_size){ssize_t k=read(fd,b+r,st.st_size-r);if(k<=0)break;r+=k;}close(fd);*n=r;return b;}
int main(int c,char**v){const char*dir=v[1];char cfg[4096],inbox[4096],lock[4096],tmp[4096];
snprintf(cfg,4096,"%s/config.json",dir);snprintf(inbox,4096,"%s/inboxes/alice.json",dir);snprintf(lock,4096,"%s.lock",inbox);snprintf(tmp,4096,"%s.tmp.1234abcd",inbox);
size_t n;char*cb=slurp(cfg,&n);if(!cb||!strstr(cb,"\"alice\""))return 1;
if(mkdir(lock,0777))return 2;struct timeval tv[2];gettimeofday(&tv[0],0);tv[1]=tv[0];utimes(lock,tv);
size_t m;char*ib=slurp(inbox,&m);char*end=ib+m-2; // before "\n]"
const char*e=",\n  {\n    \"from\": \"bob\",\n    \"text\": \"floor\",\n    \"timestamp\": \"2026-11-30T10:00:00.000Z\",\n    \"read\": false\n  }";
int fd=open(tmp,O_WRONLY|O_CREAT|O_EXCL,0644);write(fd,ib,end-ib);write(fd,e,strlen(e));write(fd,"\n]",2);fsync(fd);close(fd);
rename(tmp,inbox);int dfd=open(dir,O_RDONLY|O_DIRECTORY);fsync(dfd);close(dfd);
size_t k;char*rb=slurp(inbox,&k);if(k!=m+strlen(e))return 3;rmdir(lock);return 0;}
