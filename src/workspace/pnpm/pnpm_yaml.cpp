#include "pnpm_yaml.hpp"

#include <yaml.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace qk::workspace::pnpm_yaml {

const char* describe(const Node& n)
{
    switch (n.kind) {
    case Node::Kind::map: return "a mapping";
    case Node::Kind::seq: return "a sequence";
    case Node::Kind::scalar: return n.is_null() ? "nothing (null)" : "a scalar";
    }
    return "?";
}

namespace {

// Owns a libyaml parser and the event being looked at.
class Parser {
public:
    explicit Parser(std::string_view text)
    {
        yaml_parser_initialize(&p_);
        yaml_parser_set_input_string(&p_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    }
    ~Parser()
    {
        if (has_event_)
            yaml_event_delete(&e_);
        yaml_parser_delete(&p_);
    }
    Parser(const Parser&) = delete;
    Parser& operator=(const Parser&) = delete;

    // The next event, or null on a syntax error.
    const yaml_event_t* next()
    {
        if (has_event_)
            yaml_event_delete(&e_);
        has_event_ = yaml_parser_parse(&p_, &e_) != 0;
        return has_event_ ? &e_ : nullptr;
    }
    const yaml_parser_t& raw() const { return p_; }

private:
    yaml_parser_t p_{};
    yaml_event_t e_{};
    bool has_event_ = false;
};

struct Open {
    std::uint32_t node;
    std::vector<std::uint32_t> kids;
};

class Builder {
public:
    Builder(const std::string& file, std::string_view what_to_do) : file_(file), todo_(what_to_do) {}

    Result<std::vector<Doc>> run(std::string_view text)
    {
        Parser parser(text);
        for (;;) {
            const yaml_event_t* e = parser.next();
            if (!e)
                return syntax_error(parser.raw());
            switch (e->type) {
            case YAML_STREAM_END_EVENT: return std::move(docs_);
            case YAML_DOCUMENT_START_EVENT:
                docs_.emplace_back();
                doc().nodes.reserve(text.size() / 16);  // about one node per 16 bytes in lockfiles
                doc().kids.reserve(text.size() / 16);
                depth_ = 0;
                anchors_.clear();
                break;
            case YAML_DOCUMENT_END_EVENT: break;
            case YAML_SCALAR_EVENT: {
                std::uint32_t i = add(Node::Kind::scalar, e->start_mark, e->data.scalar.anchor);
                Node& n = doc().nodes[i];
                n.text.assign(reinterpret_cast<const char*>(e->data.scalar.value), e->data.scalar.length);
                n.plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                attach(i);
                break;
            }
            case YAML_SEQUENCE_START_EVENT:
                open(add(Node::Kind::seq, e->start_mark, e->data.sequence_start.anchor));
                break;
            case YAML_MAPPING_START_EVENT:
                open(add(Node::Kind::map, e->start_mark, e->data.mapping_start.anchor));
                break;
            case YAML_SEQUENCE_END_EVENT:
            case YAML_MAPPING_END_EVENT:
                if (auto err = close())
                    return *err;
                break;
            case YAML_ALIAS_EVENT: {
                auto it = anchors_.find(reinterpret_cast<const char*>(e->data.alias.anchor));
                if (it == anchors_.end())
                    return error(e->start_mark, "an alias to an unknown anchor");
                attach(it->second);
                break;
            }
            default: break;
            }
        }
    }

private:
    Doc& doc() { return docs_.back(); }

    std::uint32_t add(Node::Kind kind, const yaml_mark_t& mark, const yaml_char_t* anchor)
    {
        Doc& d = doc();
        auto i = static_cast<std::uint32_t>(d.nodes.size());
        Node& n = d.nodes.emplace_back();
        n.kind = kind;
        n.line = static_cast<std::uint32_t>(mark.line + 1);
        n.column = static_cast<std::uint32_t>(mark.column + 1);
        if (anchor)
            anchors_[reinterpret_cast<const char*>(anchor)] = i;
        return i;
    }

    void attach(std::uint32_t i)
    {
        if (depth_ == 0)
            doc().root = i;
        else
            stack_[depth_ - 1].kids.push_back(i);
    }

    void open(std::uint32_t i)
    {
        if (stack_.size() <= depth_)
            stack_.emplace_back();
        stack_[depth_].node = i;
        stack_[depth_].kids.clear();
        ++depth_;
    }

    std::optional<Error> close()
    {
        Open& o = stack_[--depth_];
        Doc& d = doc();
        Node& n = d.nodes[o.node];
        n.first = static_cast<std::uint32_t>(d.kids.size());
        n.count = static_cast<std::uint32_t>(o.kids.size());
        d.kids.insert(d.kids.end(), o.kids.begin(), o.kids.end());
        if (n.kind == Node::Kind::map && n.count > 2) {
            if (auto err = check_duplicate_keys(d, n))
                return err;
        }
        attach(o.node);
        return std::nullopt;
    }

    std::optional<Error> check_duplicate_keys(const Doc& d, const Node& map)
    {
        std::vector<const Node*> keys;
        keys.reserve(map.count / 2);
        for (std::uint32_t k = 0; k < map.count; k += 2) {
            const Node& key = d.child(map, k);
            if (key.is_scalar())
                keys.push_back(&key);
        }
        std::sort(keys.begin(), keys.end(), [](const Node* a, const Node* b) {
            return a->text != b->text ? a->text < b->text : a->line < b->line;
        });
        for (std::size_t k = 1; k < keys.size(); ++k) {
            if (keys[k]->text == keys[k - 1]->text)
                return Error{fmt::format("{}:{}:{}: malformed YAML: the key '{}' appears twice in one mapping (first "
                                         "at line {}); {}",
                                         file_, keys[k]->line, keys[k]->column, keys[k]->text, keys[k - 1]->line,
                                         todo_)};
        }
        return std::nullopt;
    }

    Error error(const yaml_mark_t& mark, std::string_view what) const
    {
        return Error{
            fmt::format("{}:{}:{}: malformed YAML: {}; {}", file_, mark.line + 1, mark.column + 1, what, todo_)};
    }

    Error syntax_error(const yaml_parser_t& p) const
    {
        std::string what = p.problem ? p.problem : "unreadable input";
        if (p.context)
            what += fmt::format(" ({} at line {} column {})", p.context, p.context_mark.line + 1,
                                p.context_mark.column + 1);
        return error(p.problem_mark, what);
    }

    const std::string& file_;
    std::string_view todo_;
    std::vector<Doc> docs_;
    std::vector<Open> stack_;
    std::size_t depth_ = 0;
    std::map<std::string, std::uint32_t> anchors_;
};

}  // namespace

Result<std::vector<Doc>> parse(std::string_view text, const std::string& file, std::string_view what_to_do)
{
    return Builder(file, what_to_do).run(text);
}

}  // namespace qk::workspace::pnpm_yaml
