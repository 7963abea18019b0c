#include "path_kinds.hpp"

#include <array>

namespace qk::rules {

std::string_view basename_of(std::string_view path)
{
    std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view dirname_of(std::string_view path)
{
    std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

bool is_dotenv(std::string_view name)
{
    return name == ".env" || name.starts_with(".env.") || (name.size() > 5 && name.front() == '.' && name.ends_with(".env"));
}

bool is_toolchain(std::string_view name)
{
    // Version managers (asdf, mise, nvm, fnm, volta's neighbours, pyenv, rbenv, rustup, proto) and
    // package managers' configuration: what picks the tool a command runs, not the command's input.
    static constexpr std::array<std::string_view, 17> names = {
        ".tool-versions", ".nvmrc",        ".node-version",  ".npmrc",        ".yarnrc",
        ".yarnrc.yml",    ".python-version", ".ruby-version", ".java-version", ".go-version",
        ".bun-version",   ".terraform-version", "rust-toolchain", "rust-toolchain.toml", ".mise.toml",
        "mise.toml",      ".prototools",
    };
    for (std::string_view n : names)
        if (name == n)
            return true;
    return false;
}

bool is_tsconfig(std::string_view name)
{
    return name.starts_with("tsconfig") && name.ends_with(".json");
}

}  // namespace qk::rules
