// schedplug: the command-line tool for plugin authors and cluster admins.
//   schedplug inspect FILE.so [--json] [--args JSON] [--no-create]
//                     [--load-timeout SECONDS]
//   schedplug check --config FILE --plugins DIR [--json] [--no-create]
//   schedplug simulate --config FILE --plugins DIR --nodes NODES.yaml
//                      --pods PODS.yaml [--explain POD]... [--json]
//                      [--native-only] [--simulator PATH]
//   schedplug bundle DIR -o OUT [--no-strip] [--json]
//   schedplug explain POD [--listen ADDR] [--nodes] [--json]
//   schedplug replay --record DIR --plugins DIR [--config FILE] [--json]
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "tools/schedplug/bundle_command.hpp"
#include "tools/schedplug/check_command.hpp"
#include "tools/schedplug/child_process.hpp"
#include "tools/schedplug/explain_command.hpp"
#include "tools/schedplug/inspect_command.hpp"
#include "tools/schedplug/replay_command.hpp"
#include "tools/schedplug/simulate_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "schedplug: inspect schedplug scheduler plugins (.so) and check a "
      "KubeSchedulerConfiguration against them before a roll-out, and "
      "predict where kube-scheduler would place the pods of a cluster dump."};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  schedplug inspect plugins.d/hw_encrypt.so\n"
      "  schedplug check --config scheduler-config.yaml --plugins plugins.d\n"
      "  schedplug simulate --config scheduler-config.yaml --plugins "
      "plugins.d \\\n"
      "      --nodes nodes.yaml --pods pods.yaml --explain default/web-1\n"
      "  schedplug bundle build/plugins.d -o bundle\n"
      "  schedplug explain default/web-1 --listen "
      "unix:///run/schedplug/host.sock\n"
      "  schedplug replay --record /var/lib/schedplug/record --plugins "
      "new-plugins.d\n"
      "Run `schedplug <command> --help` for a command's options.");

  schedplug::tools::InspectOptions inspect_options;
  bool inspect_no_create = false;
  auto* inspect = app.add_subcommand(
      "inspect",
      "Show what a plugin .so reports: name, plugin version, ABI version, "
      "extension points, per-pod hooks, normalization, refresh period and "
      "events, and what an instance created with --args declares: data, "
      "hints and pod keys. Exits 1 when the file is not a valid plugin (with "
      "the reason).");
  inspect->add_option("FILE", inspect_options.file, "the plugin shared object")
      ->required();
  inspect->add_flag("--json", inspect_options.json,
                    "print JSON instead of text");
  inspect
      ->add_option("--args", inspect_options.args,
                   "the pluginConfig args (JSON) to create an instance with, "
                   "to show what it declares (data, hints, pod keys)")
      ->capture_default_str();
  inspect->add_flag("--no-create", inspect_no_create,
                    "show only the descriptor; do not call create()");
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

  schedplug::tools::SimulateOptions simulate_options;
  int simulate_timeout = 600;
  auto* simulate = app.add_subcommand(
      "simulate",
      "Predict where kube-scheduler puts the pending pods of a `kubectl get "
      "pods -o yaml` dump on the nodes of a `kubectl get nodes -o yaml` "
      "dump: kube-scheduler itself decides (the version schedplug ships, "
      "its in-tree plugins and the profile's configuration), run by "
      "kube-scheduler-simulate against an in-memory API, with the native "
      "plugins served by a schedplug-host started for the run. Prints each "
      "pod's node (ties as ties) or kube-scheduler's reason for leaving it "
      "Pending; --explain shows every node's verdict and scores. Pods bound "
      "in the dump are load on their nodes. --native-only runs only the "
      "native plugins instead, in this process (faster; blind to resources, "
      "taints, affinity and spreading). Exit status: 0 every pod placed, 1 "
      "some unschedulable, preempted or in error (or the simulation could "
      "not finish), 2 bad input (dumps, config, plugins, no "
      "kube-scheduler-simulate).");
  simulate
      ->add_option("--config", simulate_options.config,
                   "the KubeSchedulerConfiguration YAML")
      ->required();
  simulate
      ->add_option("--plugins", simulate_options.plugins,
                   "the directory holding the plugin .so files")
      ->required();
  simulate
      ->add_option("--nodes", simulate_options.nodes,
                   "nodes: `kubectl get nodes -o yaml` output (a List, or "
                   "one or more YAML documents)")
      ->required();
  simulate
      ->add_option("--pods", simulate_options.pods,
                   "pods: `kubectl get pods -A -o yaml` output; pods "
                   "without spec.nodeName are scheduled")
      ->required();
  simulate->add_option("--explain", simulate_options.explain,
                       "POD (NAMESPACE/NAME or NAME; repeatable; '*' for "
                       "every pod): show every node's Filter verdict per "
                       "native plugin with its reason, and every raw and "
                       "normalized score");
  simulate->add_flag("--json", simulate_options.json,
                     "print JSON instead of text");
  simulate->add_flag("--native-only", simulate_options.native_only,
                     "run only the native plugins (the host's chains, in "
                     "this process) instead of kube-scheduler: faster, but "
                     "kube-scheduler's in-tree plugins do not run");
  simulate->add_option("--simulator", simulate_options.simulator,
                       "the kube-scheduler-simulate program (default: "
                       "$SCHEDPLUG_SIMULATOR, beside schedplug, or on PATH)");
  simulate
      ->add_option("--timeout", simulate_timeout,
                   "seconds loading the plugins and simulating may take "
                   "before they are stopped (exit 1)")
      ->capture_default_str();

  schedplug::tools::BundleOptions bundle_options;
  bool no_strip = false;
  auto* bundle = app.add_subcommand(
      "bundle",
      "Make the plugins of a directory ready to ship: copy each .so into OUT "
      "stripped, load it with the host's own checks, write manifest.json "
      "(file, name, version, ABI version, size, SHA-256 of each) and "
      "SHA256SUMS (the pins schedplug-host enforces with --plugin-sha256), "
      "and print how to ship OUT as a ConfigMap (when it fits in 1 MiB) or "
      "as an image volume. Exit status: 0 bundled, 1 a plugin cannot ship "
      "(OUT is left as it was), 2 bad arguments.");
  bundle
      ->add_option("DIR", bundle_options.plugins,
                   "the directory holding the plugin .so files")
      ->required();
  bundle
      ->add_option("-o,--out", bundle_options.out,
                   "the bundle directory to write (new or empty)")
      ->required();
  bundle->add_flag("--no-strip", no_strip,
                   "copy the files as they are (warns about symbols and "
                   "debug sections that ship for nothing)");
  bundle->add_flag("--json", bundle_options.json,
                   "print JSON (the manifest and the ConfigMap size)");
  bundle
      ->add_option("--configmap", bundle_options.configmap_name,
                   "the ConfigMap name the printed command uses")
      ->capture_default_str();
  bundle
      ->add_option("--namespace", bundle_options.k8s_namespace,
                   "the namespace the printed command uses")
      ->capture_default_str();
  bundle
      ->add_option("--load-timeout", load_timeout,
                   "seconds loading the plugins may take before it is "
                   "stopped (exit 1)")
      ->capture_default_str();

  schedplug::tools::ExplainOptions explain_options;
  auto* explain = app.add_subcommand(
      "explain",
      "Ask a running schedplug-host why a pod went where it went, or "
      "nowhere: for each of the pod's recent cycles it holds, what became "
      "of it (the node kube-scheduler reserved, or that it found none and "
      "what its filters said), the native filters' verdicts counted by "
      "reason, the best native scores, and each plugin's hook times; "
      "--nodes lists the nodes. Exit status: 0 cycles found, 1 the host "
      "holds none (the output says why), 2 bad arguments or no answer.");
  explain
      ->add_option("POD", explain_options.pod,
                   "namespace/name or the pod's uid")
      ->required();
  explain
      ->add_option("--listen", explain_options.listen,
                   "the host's --listen address (the one the shim uses)")
      ->capture_default_str();
  explain->add_flag("--nodes", explain_options.nodes,
                    "also list the nodes of each reason, and every rejected "
                    "and scored node with each plugin's verdict and scores");
  explain->add_flag("--json", explain_options.json,
                    "print JSON instead of text (it always lists the nodes)");
  explain
      ->add_option("--timeout", explain_options.timeout_seconds,
                   "seconds to wait for the answer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  explain->add_option("--tls-ca", explain_options.tls_ca,
                      "for a host serving TLS on TCP: the CA (PEM) that "
                      "signed its certificate");
  explain->add_option("--tls-cert", explain_options.tls_cert,
                      "with --tls-ca, for a host started with "
                      "--tls-client-ca: a client certificate (PEM)");
  explain->add_option("--tls-key", explain_options.tls_key,
                      "the key (PEM) of --tls-cert");

  schedplug::tools::ReplayCommandOptions replay_options;
  int replay_timeout = 3600;
  auto* replay = app.add_subcommand(
      "replay",
      "Re-evaluate the pod cycles schedplug-host --record wrote with other "
      "plugin builds, through the host's own engine, and report the pods "
      "whose feasible set or top native-scored node changed, new errors, "
      "hooks (Reserve, PreBind, ...) that answer otherwise, and time per "
      "call by node count. Exit status: 0 the same verdicts, top-ranked "
      "nodes, errors and hooks' answers, 1 some changed, 2 bad arguments, "
      "an unreadable recording or plugins the host refuses.");
  replay
      ->add_option("--record", replay_options.replay.record,
                   "the directory schedplug-host --record wrote, or one file "
                   "of it")
      ->required();
  replay
      ->add_option("--plugins", replay_options.replay.plugins,
                   "the plugin directory to replay with")
      ->required()
      ->check(CLI::ExistingDirectory);
  replay->add_option("--config", replay_options.replay.config,
                     "the KubeSchedulerConfiguration to replay with (default: "
                     "the one the recording was answered with)");
  replay->add_option("--plugin-sha256", replay_options.replay.plugin_sha256,
                     "as schedplug-host's --plugin-sha256");
  replay->add_option("--workers", replay_options.replay.workers,
                     "filter/score worker threads (0: cores - 1)");
  replay
      ->add_option("--examples", replay_options.replay.max_examples,
                   "pods whose differences are printed, each with its first "
                   "of each kind (all are counted)")
      ->capture_default_str();
  replay->add_flag("--json", replay_options.json, "print JSON instead of text");
  replay
      ->add_option("--timeout", replay_timeout,
                   "seconds the replay may take before it is stopped (exit 2)")
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

  // No plugin code runs: the host answers.
  if (*explain) {
    return schedplug::tools::run_explain(explain_options, std::cout, std::cerr);
  }
  // Plugins are loaded (their constructors run) in a child process.
  if (*replay) {
    return schedplug::tools::run_in_child(
        [&] {
          try {
            return schedplug::tools::run_replay(replay_options, std::cout,
                                                std::cerr);
          } catch (const std::exception& e) {
            std::cerr << "error: " << e.what() << "\n";
            return 2;
          }
        },
        std::chrono::seconds(replay_timeout > 0 ? replay_timeout : 3600),
        std::cerr, "replaying the recording");
  }
  if (*simulate) {
    const auto timeout =
        std::chrono::seconds(simulate_timeout > 0 ? simulate_timeout : 600);
    simulate_options.timeout = timeout;
    return schedplug::tools::run_in_child(
        [&] {
          try {
            return schedplug::tools::run_simulate(simulate_options, std::cout,
                                                  std::cerr);
          } catch (const std::exception& e) {
            std::cerr << "error: " << e.what() << "\n";
            return 2;
          }
        },
        timeout, std::cerr, "loading the plugins and simulating");
  }
  const auto timeout =
      std::chrono::seconds(load_timeout > 0 ? load_timeout : 60);
  if (*bundle) {
    bundle_options.strip = !no_strip;
    return schedplug::tools::run_bundle(bundle_options, timeout, std::cout,
                                        std::cerr);
  }
  return schedplug::tools::run_in_child(
      [&] {
        try {
          if (*inspect) {
            inspect_options.create = !inspect_no_create;
            return schedplug::tools::run_inspect(inspect_options, std::cout,
                                                 std::cerr);
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
