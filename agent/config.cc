// The option sources and their precedence (config.h).
#include "agent/config.h"

namespace jitdump_agent {

std::string ConfigFileToOptions(std::string_view contents) {
  std::string out;
  while (!contents.empty()) {
    const size_t newline = contents.find('\n');
    std::string_view line = contents.substr(0, newline);
    contents = newline == std::string_view::npos ? std::string_view() : contents.substr(newline + 1);
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (!out.empty()) out.push_back(',');
    out.append(line);
  }
  return out;
}

ParseResult LoadOptions(std::string_view command_line, const char* environment,
                        bool (*read_file)(const std::string& path, std::string* contents), Options& options) {
  const std::string_view env = environment != nullptr ? std::string_view(environment) : std::string_view();
  // Find config= first, from the sources that may name it (the command line wins).
  Options probe;
  (void)ParseOptions(env, probe);
  (void)ParseOptions(command_line, probe);

  ParseResult result;
  if (!probe.config.empty()) {
    std::string contents;
    if (read_file(probe.config, &contents)) {
      ParseResult file_result = ParseOptions(ConfigFileToOptions(contents), options);
      for (auto& error : file_result.errors) {
        error.message = "in " + Printable(probe.config, 100) + ": " + error.message;
        result.errors.push_back(std::move(error));
      }
    } else {
      result.errors.push_back({"config", "cannot read config file '" + Printable(probe.config, 100) +
                                             "' (missing, unreadable or not a regular file)"});
    }
  }
  ParseResult env_result = ParseOptions(env, options);
  for (auto& error : env_result.errors) {
    error.message = std::string(kOptionsEnvironmentVariable) + ": " + error.message;
    result.errors.push_back(std::move(error));
  }
  ParseResult command_result = ParseOptions(command_line, options);
  for (auto& error : command_result.errors) result.errors.push_back(std::move(error));
  return result;
}

std::string ExpandPid(std::string_view text, uint32_t pid) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == '%') {
      out.push_back('%');
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace jitdump_agent
