defmodule RustyJson.AptLibs do
  @moduledoc false
  # jiffy and PropEr come from Debian's packages (erlang-jiffy, erlang-proper), not from hex. Elixir 1.15+ prunes
  # the code path of OTP applications a project does not declare, so tests and benches put them back explicitly.
  # PropEr is required; jiffy is optional for tests (Debian sid has no erlang-jiffy; RustyJson.Reference uses
  # OTP's :json there).

  @spec add_paths!([atom()]) :: :ok
  def add_paths!(apps), do: Enum.each(apps, &add_path!/1)

  @doc "Adds the apps that are installed; returns those it added."
  @spec add_paths_if_present([atom()]) :: [atom()]
  def add_paths_if_present(apps), do: Enum.filter(apps, &add_path/1)

  defp add_path!(app) do
    unless add_path(app) do
      raise "#{app} was not found under #{:code.root_dir()}/lib: install it with `make test` " <>
              "(apt package erlang-#{app})"
    end

    :ok
  end

  # Under the VM's lib directory, or under $RUSTYJSON_BENCH_LIBS (the benchmarks on a VM whose Debian suite has no
  # erlang-jiffy use the package of another suite: scripts/bench-matrix).
  defp add_path(app) do
    dirs = [
      Path.join(:code.root_dir(), "lib") | List.wrap(System.get_env("RUSTYJSON_BENCH_LIBS"))
    ]

    case Enum.flat_map(dirs, &Path.wildcard(Path.join([&1, "#{app}-*", "ebin"]))) do
      [] ->
        false

      paths ->
        paths |> Enum.sort() |> List.last() |> Code.prepend_path()
        true
    end
  end
end
