// Settings::read over a map standing in for the environment, for the unit cases of each setting.
#pragma once

#include <map>
#include <string>

#include "qk/util/settings.hpp"

namespace qk::test {

inline Result<Settings> settings_from(std::map<std::string, std::string> vars)
{
    return Settings::read([vars = std::move(vars)](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    });
}

}  // namespace qk::test
