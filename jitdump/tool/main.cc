// `jitdump`: inspect, validate and use perf jitdump files. Everything but main() is in cli.cc
// and the command files, so the fuzzer can drive Main() in-process.
#include "jitdump/tool/cli.h"

int main(int argc, char** argv) { return jitdump::tool::Main(argc, argv); }
