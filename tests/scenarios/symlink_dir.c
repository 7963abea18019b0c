// Scenario: a symlinked directory on the path. Every recorded path is canonical: it names the real
// directory, never the link.
// argv[1]: a fresh directory; the test pre-creates real/f, real/u, real/r1 and link -> real.
//   open(link/f, O_RDONLY)                  -> read real/f
//   open(link/new, O_CREAT|O_EXCL|O_WRONLY) -> created, written real/new
//   mkdir(link/md)                          -> created real/md
//   unlink(link/u)                          -> removed real/u
//   rename(link/r1, link/r2)                -> renamed {real/r1 -> real/r2}
//   open(link/missing, O_RDONLY)            -> probed real/missing
//   open(link, O_RDONLY|O_DIRECTORY)        -> listed real
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    open_close(at("link/f"), O_RDONLY);
    create_file(at("link/new"));
    must(mkdir(at("link/md"), 0755), "mkdir link/md");
    must(unlink(at("link/u")), "unlink link/u");
    must(rename(at("link/r1"), at("link/r2")), "rename link/r1 link/r2");
    open_fails(at("link/missing"), O_RDONLY, ENOENT);
    open_close(at("link"), O_RDONLY | O_DIRECTORY);
    return 0;
}
