#include "record/strace_parser.hpp"
