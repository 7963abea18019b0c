// copy_sparse: holes stay holes wherever they lie (the cache's store and restore, the overlay's apply
// across filesystems), and the data around them is copied byte for byte.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "qk/util/sparse_copy.hpp"
#include "qk/util/unique_fd.hpp"
#include "test_support.hpp"

namespace {

constexpr off_t kMiB = off_t{1} << 20;

void put(int fd, off_t at, const std::string& bytes)
{
    REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), at) == static_cast<ssize_t>(bytes.size()));
}

std::string get(int fd, off_t at, std::size_t n)
{
    std::string out(n, '?');
    REQUIRE(::pread(fd, out.data(), n, at) == static_cast<ssize_t>(n));
    return out;
}

}  // namespace

TEST_CASE("a sparse file is copied with its holes, its data where it was", "[util][sparse]")
{
    qk::test::TempDir tmp{"qk-sparse"};
    const std::string from = (tmp.path / "from").string(), to = (tmp.path / "to").string();
    qk::UniqueFd src(::open(from.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    REQUIRE(src.valid());
    // A hole first, data in the middle, a hole at the end: 256 MiB long, two blocks of data.
    put(src.get(), 100 * kMiB, "middle");
    put(src.get(), 200 * kMiB + 5, "later");
    REQUIRE(::ftruncate(src.get(), 256 * kMiB) == 0);
    struct stat st;
    REQUIRE(::fstat(src.get(), &st) == 0);
    if (qk::allocated_bytes(st) >= kMiB) {
        qk::test::skip("this file system does not keep holes");
        return;
    }

    qk::UniqueFd dst(::open(to.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    REQUIRE(dst.valid());
    REQUIRE(qk::copy_sparse(src.get(), dst.get(), "the copy"));
    struct stat copied;
    REQUIRE(::fstat(dst.get(), &copied) == 0);
    CHECK(copied.st_size == 256 * kMiB);
    CHECK(qk::allocated_bytes(copied) < kMiB);
    CHECK(get(dst.get(), 100 * kMiB - 2, 10) == std::string("\0\0middle\0\0", 10));
    CHECK(get(dst.get(), 200 * kMiB + 5, 5) == "later");
    CHECK(get(dst.get(), 256 * kMiB - 4, 4) == std::string(4, '\0'));
    // Neither offset moved: a caller reads the copy from where it was.
    CHECK(::lseek(src.get(), 0, SEEK_CUR) == 0);
    CHECK(::lseek(dst.get(), 0, SEEK_CUR) == 0);
}

TEST_CASE("a dense file, an empty one and one that is all hole are copied whole", "[util][sparse]")
{
    qk::test::TempDir tmp{"qk-sparse"};
    int n = 0;
    auto copy_of = [&](auto fill) {
        const std::string from = (tmp.path / ("from" + std::to_string(n))).string();
        const std::string to = (tmp.path / ("to" + std::to_string(n++))).string();
        qk::UniqueFd src(::open(from.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        qk::UniqueFd dst(::open(to.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        REQUIRE((src.valid() && dst.valid()));
        fill(src.get());
        REQUIRE(qk::copy_sparse(src.get(), dst.get(), "the copy"));
        struct stat st;
        REQUIRE(::fstat(dst.get(), &st) == 0);
        return std::make_pair(st.st_size, get(dst.get(), 0, static_cast<std::size_t>(st.st_size)));
    };
    std::string dense(3 * kMiB + 7, 'x');
    for (std::size_t i = 0; i < dense.size(); i += 4099)
        dense[i] = static_cast<char>('a' + i % 26);
    CHECK(copy_of([&](int fd) { put(fd, 0, dense); }).second == dense);
    CHECK(copy_of([](int) {}).first == 0);
    auto hole = copy_of([](int fd) { REQUIRE(::ftruncate(fd, 12345) == 0); });
    CHECK(hole.second == std::string(12345, '\0'));
}
