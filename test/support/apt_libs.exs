defmodule RustyJson.AptLibs do
  @moduledoc false
  # jiffy and PropEr come from Debian's packages (erlang-jiffy, erlang-proper), not from hex. Elixir 1.15+ prunes
  # the code path of OTP applications a project does not declare, so tests and benches put them back explicitly.

  @spec add_paths!([atom()]) :: :ok
  def add_paths!(apps), do: Enum.each(apps, &add_path!/1)

  defp add_path!(app) do
    case Path.wildcard(Path.join([:code.root_dir(), "lib", "#{app}-*", "ebin"])) do
      [] ->
        raise "#{app} was not found under #{:code.root_dir()}/lib: install it with `make test` " <>
                "(apt package erlang-#{app})"

      paths ->
        paths |> Enum.sort() |> List.last() |> Code.prepend_path()
    end
  end
end
