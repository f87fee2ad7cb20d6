defmodule RustyJson.DocsTest do
  # Every public module of lib/ has a @moduledoc, every public function a @doc and a @spec (protocol
  # implementations and modules marked `@moduledoc false` are not public API).
  use ExUnit.Case, async: true

  doctest RustyJson.Fragment
  doctest RustyJson.Encode
  doctest RustyJson.Encoder

  defp public_lib_modules do
    {:ok, modules} = :application.get_key(:rusty_json, :modules)

    for module <- modules,
        source = to_string(module.module_info(:compile)[:source]),
        String.contains?(source, "/lib/"),
        not function_exported?(module, :__impl__, 1),
        {:docs_v1, _, _, _, moduledoc, _, docs} = Code.fetch_docs(module),
        moduledoc != :hidden,
        do: {module, moduledoc, docs}
  end

  test "the public API is found (the check below is not vacuous)" do
    modules = Enum.map(public_lib_modules(), &elem(&1, 0))
    assert RustyJson in modules
    assert RustyJson.Encoder in modules
    assert RustyJson.Formatter in modules
  end

  test "every public module has a @moduledoc" do
    assert for({module, :none, _} <- public_lib_modules(), do: module) == []
  end

  test "every public function has a @doc and a @spec (or is a protocol callback)" do
    missing =
      for {module, _, docs} <- public_lib_modules(),
          specs = specs(module),
          {{kind, name, arity}, _, _, doc, _} <- docs,
          kind in [:function, :macro],
          doc != :hidden,
          problem <- [
            doc == :none && "no @doc",
            kind == :function and {name, arity} not in specs && "no @spec"
          ],
          problem,
          do: "#{inspect(module)}.#{name}/#{arity}: #{problem}"

    assert missing == []
  end

  defp specs(module) do
    specs = with {:ok, specs} <- Code.Typespec.fetch_specs(module), do: specs, else: (_ -> [])
    callbacks = with {:ok, cbs} <- Code.Typespec.fetch_callbacks(module), do: cbs, else: (_ -> [])
    Enum.map(specs ++ callbacks, &elem(&1, 0))
  end
end
