// Scenario: threads. Four pthreads each read in.txt and create their own file; the threads' work is
// the process's (one process in the recording, not five).
// argv[1]: a fresh directory; the test pre-creates in.txt.
//   each thread i: open(in.txt, O_RDONLY)                   -> read in.txt
//                  open(t<i>.txt, O_CREAT|O_EXCL|O_WRONLY)  -> created, written t0.txt .. t3.txt
// Prints "pid <pid>" on stdout.
#include "scenario.h"
#include <pthread.h>

#define NTHREADS 4

static pthread_barrier_t barrier;

static void *work(void *arg)
{
    long i = (long)arg;
    char p[8192];  // its own buffer: at()'s are not for threads
    pthread_barrier_wait(&barrier);  // all threads exist before any file is touched
    snprintf(p, sizeof p, "%s/in.txt", scenario_dir);
    open_close(p, O_RDONLY);
    snprintf(p, sizeof p, "%s/t%ld.txt", scenario_dir, i);
    create_file(p);
    return NULL;
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    print_pid();
    pthread_t t[NTHREADS];
    pthread_barrier_init(&barrier, NULL, NTHREADS);
    for (long i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
            return 101;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
