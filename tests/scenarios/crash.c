// Scenario: a crashing command: it writes a file, then dereferences a null pointer (SIGSEGV, so
// qk-trace exits 128 + 11 = 139). Core dumps are switched off so no core file appears.
// argv[1]: a fresh directory.
//   open(before.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written before.txt
#include "scenario.h"
#include <stdint.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    create_file(at("before.txt"));
    volatile uintptr_t address = 0;  // volatile: the compiler cannot see the null and turn it into a trap
    *(volatile int *)address = 1;
    return 100;
}
