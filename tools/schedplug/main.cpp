// schedplug: the command-line tool for plugin authors and cluster admins.
//   schedplug inspect FILE.so [--json]
//   schedplug check --config FILE --plugins DIR [--json] [--no-create]
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "tools/schedplug/check_command.hpp"
#include "tools/schedplug/child_process.hpp"
#include "tools/schedplug/inspect_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "schedplug: inspect schedplug scheduler plugins (.so) and check a "
      "KubeSchedulerConfiguration against them before a roll-out."};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  schedplug inspect plugins.d/hw_encrypt.so\n"
      "  schedplug check --config scheduler-config.yaml --plugins plugins.d\n"
      "Run `schedplug <command> --help` for a command's options.");

  std::string inspect_file;
  bool inspect_json = false;
  auto* inspect = app.add_subcommand(
      "inspect",
      "Show what a plugin .so reports: name, plugin version, ABI version, "
      "extension points, normalization, refresh period and events. Exits 1 "
      "when the file is not a valid plugin (with the reason).");
  inspect->add_option("FILE", inspect_file, "the plugin shared object")
      ->required();
  inspect->add_flag("--json", inspect_json, "print JSON instead of text");
  int load_timeout = 60;
  inspect
      ->add_option("--load-timeout", load_timeout,
                   "seconds loading may take before it is stopped (exit 1)")
      ->capture_default_str();

  schedplug::tools::CheckOptions check_options;
  bool no_create = false;
  auto* check = app.add_subcommand(
      "check",
      "Check a KubeSchedulerConfiguration against the plugins in a directory: "
      "every enabled native name is reported by exactly one valid .so, at an "
      "extension point it implements, and every plugin's create() accepts its "
      "profile's args. Prints every problem at once. Exit status: 0 no errors "
      "(warnings allowed), 1 errors, 2 unreadable config or plugin directory.");
  check
      ->add_option("--config", check_options.config,
                   "the KubeSchedulerConfiguration YAML "
                   "(kubescheduler.config.k8s.io/v1)")
      ->required();
  check
      ->add_option("--plugins", check_options.plugins,
                   "the directory holding the plugin .so files")
      ->required();
  check->add_flag("--json", check_options.json, "print JSON instead of text");
  check->add_flag("--no-create", no_create,
                  "skip calling each plugin's create() with its args");
  check
      ->add_option("--load-timeout", load_timeout,
                   "seconds loading and create() may take before they are "
                   "stopped (exit 1)")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // Plugins may log from create(); keep that on stderr, away from output.
  spdlog::set_default_logger(spdlog::stderr_color_mt("schedplug"));
  spdlog::set_level(spdlog::level::warn);

  // Plugins are loaded (their constructors run) in a child process.
  const auto timeout =
      std::chrono::seconds(load_timeout > 0 ? load_timeout : 60);
  return schedplug::tools::run_in_child(
      [&] {
        try {
          if (*inspect) {
            return schedplug::tools::run_inspect(inspect_file, inspect_json,
                                                 std::cout, std::cerr);
          }
          check_options.create = !no_create;
          return schedplug::tools::run_check(check_options, std::cout,
                                             std::cerr);
        } catch (const std::exception& e) {
          std::cerr << "error: " << e.what() << "\n";
          return 2;
        }
      },
      timeout, std::cerr);
}
