Code.require_file("support/apt_libs.exs", __DIR__)
Code.require_file("support/reference.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:proper])

# Loaded here, after PropEr joined the code path (compiled with test/support, its calls to PropEr would be
# undefined-module warnings where Mix keeps only the project's applications in the path, Elixir 1.15+).
Code.require_file("support/json_gen.exs", __DIR__)

# Loaded, not compiled with test/support: its crypto and inets calls are not the project's applications.
Code.require_file("support/artifact.exs", __DIR__)
RustyJson.AptLibs.add_paths_if_present([:jiffy])
IO.puts("Reference JSON implementations on this VM: #{inspect(RustyJson.Reference.names())}")

# assert_receive waits for work done in other processes (decodes, copies of large terms); its default 100 ms is
# wall-clock time that a busy machine can exceed. A message that comes returns at once, so a long wait costs only
# a failing test.
# At most one test module per scheduler at a time (ExUnit's default is two): several tests here are a few
# seconds of CPU each (child VMs, million-element inputs), and on a loaded machine two of them sharing one core
# would each take twice as long against their timeouts, for no shorter run overall.
ExUnit.start(assert_receive_timeout: 30_000, max_cases: System.schedulers_online())
