// StraceParser: reads `strace -f -y` output, line by line, into RecordingSink events.
#pragma once
