// Scenario: threads. Four pthreads each read in.txt and create their own file; the threads' work is
// the process's (one process in the recording, not five).
// argv[1]: a fresh directory; the test pre-creates in.txt.
//   each thread i: open(in.txt, O_RDONLY)                   -> read in.txt
//                  open(t<i>.txt, O_CREAT|O_EXCL|O_WRONLY)  -> created, written t0.txt .. t3.txt
// Prints "pid <pid>" on stdout.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 4

static const char *dir;
static pthread_barrier_t barrier;

static void *work(void *arg)
{
    long i = (long)arg;
    char p[8192];
    pthread_barrier_wait(&barrier);  // all threads exist before any file is touched
    snprintf(p, sizeof p, "%s/in.txt", dir);
    int fd = open(p, O_RDONLY);
    if (fd < 0) {
        perror(p);
        exit(100);
    }
    close(fd);
    snprintf(p, sizeof p, "%s/t%ld.txt", dir, i);
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        perror(p);
        exit(100);
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    printf("pid %d\n", getpid());
    fflush(stdout);
    pthread_t t[NTHREADS];
    pthread_barrier_init(&barrier, NULL, NTHREADS);
    for (long i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
            return 101;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
