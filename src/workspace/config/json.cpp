// Json: construction, lookup, truthiness, serialisation (compact and canonical) and equality.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "qk/workspace/json.hpp"
#include "qk/util/json_writer.hpp"

namespace qk::workspace {

Json Json::boolean(bool b)
{
    Json j;
    j.v_ = b;
    return j;
}

Json Json::number(double d)
{
    Json j;
    j.v_ = d;
    return j;
}

Json Json::string(std::string s)
{
    Json j;
    j.v_ = std::move(s);
    return j;
}

Json Json::array(Array items)
{
    Json j;
    j.v_ = std::move(items);
    return j;
}

Json Json::object(Object members)
{
    Json j;
    j.v_ = std::move(members);
    return j;
}

const Json* Json::find(std::string_view key) const
{
    if (!is_object())
        return nullptr;
    for (const auto& [k, v] : as_object())
        if (k == key)
            return &v;
    return nullptr;
}

Json* Json::find(std::string_view key)
{
    return const_cast<Json*>(static_cast<const Json*>(this)->find(key));
}

void Json::set(std::string key, Json value)
{
    auto& members = as_object();
    for (auto& [k, v] : members) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    members.emplace_back(std::move(key), std::move(value));
}

bool Json::erase(std::string_view key)
{
    if (!is_object())
        return false;
    auto& members = as_object();
    auto it = std::find_if(members.begin(), members.end(), [&](const auto& m) { return m.first == key; });
    if (it == members.end())
        return false;
    members.erase(it);
    return true;
}

bool Json::truthy() const
{
    switch (kind()) {
    case Kind::null: return false;
    case Kind::boolean: return as_bool();
    case Kind::number: return as_number() != 0 && !std::isnan(as_number());
    case Kind::string: return !as_string().empty();
    case Kind::array:
    case Kind::object: return true;
    }
    return false;
}

const char* Json::describe() const
{
    switch (kind()) {
    case Kind::null: return "null";
    case Kind::boolean: return "a boolean";
    case Kind::number: return "a number";
    case Kind::string: return "a string";
    case Kind::array: return "an array";
    case Kind::object: return "an object";
    }
    return "a value";
}

namespace {

// One escaper for every JSON qk writes (RFC 8259; bytes that are not UTF-8 become U+FFFD).
void write_string(std::string& out, const std::string& s) { JsonWriter::escape(out, s); }

// Numbers as JavaScript prints them for the common cases: integers without a fraction, others in
// the shortest form that reads back the same.
void write_number(std::string& out, double d)
{
    if (!std::isfinite(d)) {
        out += "null";
        return;
    }
    if (d == std::trunc(d) && std::fabs(d) < 9007199254740992.0) {
        out += std::to_string(static_cast<long long>(d));
        return;
    }
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
    out.append(buf, ec == std::errc() ? end : buf);
}

void write(std::string& out, const Json& j, bool sorted)
{
    switch (j.kind()) {
    case Json::Kind::null: out += "null"; break;
    case Json::Kind::boolean: out += j.as_bool() ? "true" : "false"; break;
    case Json::Kind::number: write_number(out, j.as_number()); break;
    case Json::Kind::string: write_string(out, j.as_string()); break;
    case Json::Kind::array: {
        out += '[';
        bool first = true;
        for (const auto& item : j.as_array()) {
            if (!first)
                out += ',';
            first = false;
            write(out, item, sorted);
        }
        out += ']';
        break;
    }
    case Json::Kind::object: {
        std::vector<const std::pair<std::string, Json>*> members;
        for (const auto& m : j.as_object())
            members.push_back(&m);
        if (sorted)
            std::sort(members.begin(), members.end(), [](auto* a, auto* b) { return a->first < b->first; });
        out += '{';
        bool first = true;
        for (const auto* m : members) {
            if (!first)
                out += ',';
            first = false;
            write_string(out, m->first);
            out += ':';
            write(out, m->second, sorted);
        }
        out += '}';
        break;
    }
    }
}

}  // namespace

std::string Json::dump() const
{
    std::string out;
    write(out, *this, false);
    return out;
}

std::string Json::canonical() const
{
    std::string out;
    write(out, *this, true);
    return out;
}

bool operator==(const Json& a, const Json& b)
{
    return a.v_ == b.v_;
}

}  // namespace qk::workspace
