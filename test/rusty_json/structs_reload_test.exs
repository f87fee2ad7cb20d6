defmodule RustyJson.StructsReloadTest do
  # A derived struct's template is used only while the implementation that registered it is the loaded one: a
  # custom `defimpl` loaded over it (IEx, a code reloader, a hot upgrade), the implementation deleted, or derived
  # again with other fields, and encode writes what the loaded implementation says, at the top, nested, compact
  # and pretty, sorted or not (Elixir checks the templates each encode reports against the protocol's dispatch).
  #
  # Not async: it replaces a module other tests could see (RustyJson.Test.Reloaded is used only here).
  use ExUnit.Case, async: false

  alias RustyJson.Test.Reloaded

  @impl_module RustyJson.Encoder.RustyJson.Test.Reloaded

  setup do
    on_exit(fn ->
      # The derived implementation back from its beam file (its @on_load registers its template again).
      :code.purge(@impl_module)
      :code.delete(@impl_module)
      :code.purge(@impl_module)
      {:module, _} = :code.ensure_loaded(@impl_module)
    end)
  end

  defp quietly(fun), do: ExUnit.CaptureIO.capture_io(:stderr, fun)

  defp shapes(value) do
    [
      RustyJson.encode!(value),
      RustyJson.encode!([value, value]),
      RustyJson.encode!(%{"k" => [1, value]}, sort_keys: true),
      RustyJson.encode!([value], pretty: true),
      RustyJson.encode!(%{"k" => value}, maps: :strict)
    ]
  end

  # The shapes' texts for a value written as `json` (and as `sorted` under `sort_keys: true`).
  defp expected(json, sorted \\ nil) do
    [
      json,
      "[#{json},#{json}]",
      ~s({"k":[1,#{sorted || json}]}),
      RustyJson.Formatter.pretty_print("[#{json}]"),
      ~s({"k":#{json}})
    ]
  end

  # What the derived implementation writes for `value`: its fields in its template's order (`Map.keys/1` of the
  # struct where it was compiled: from OTP 26 atom keys are in atom-index order, which need not be this VM's).
  defp derived_json(value) do
    {_all_keys, fields, _keys, _id} = apply(@impl_module, :__template__, [])
    RustyJson.encode!(RustyJson.OrderedObject.new(for f <- fields, do: {f, Map.fetch!(value, f)}))
  end

  test "a custom implementation loaded over a derived one is what encodes, at every place" do
    value = %Reloaded{a: 1, b: "x"}
    assert shapes(value) == expected(derived_json(value), ~s({"a":1,"b":"x"}))

    quietly(fn ->
      Code.eval_string("""
      defimpl RustyJson.Encoder, for: RustyJson.Test.Reloaded do
        def encode(%{b: b}, _opts), do: [?", "custom ", b, ?"]
      end
      """)
    end)

    assert IO.iodata_to_binary(RustyJson.Encoder.encode(value, [])) == ~s("custom x")
    assert shapes(value) == expected(~s("custom x"))
  end

  test "derived again with other fields: the new fields, not the old template's" do
    quietly(fn ->
      Code.eval_string("""
      require Protocol
      Protocol.derive(RustyJson.Encoder, RustyJson.Test.Reloaded, only: [:b])
      """)
    end)

    assert shapes(%Reloaded{a: 1, b: 2}) == expected(~s({"b":2}))

    quietly(fn ->
      Code.eval_string("""
      defimpl RustyJson.Encoder, for: RustyJson.Test.Reloaded do
        def encode(_value, _opts), do: "7"
      end
      """)
    end)

    assert shapes(%Reloaded{}) == expected("7")

    quietly(fn ->
      Code.eval_string("""
      require Protocol
      Protocol.derive(RustyJson.Encoder, RustyJson.Test.Reloaded, except: [:b])
      """)
    end)

    assert shapes(%Reloaded{}) == expected(~s({"a":1}))
  end

  test "an implementation deleted and purged is not written from its template" do
    # A struct whose derived implementation exists only in memory (none on disk to load again).
    quietly(fn ->
      Code.eval_string("""
      defmodule RustyJson.Test.InMemoryOnly do
        @derive RustyJson.Encoder
        defstruct [:a]
      end
      """)
    end)

    value = struct(RustyJson.Test.InMemoryOnly, a: 1)
    impl = RustyJson.Encoder.RustyJson.Test.InMemoryOnly
    {_, before} = RustyJson.encode([value])

    :code.purge(impl)
    :code.delete(impl)
    :code.purge(impl)
    refute :erlang.module_loaded(impl)

    # No implementation is loaded: the protocol's answer (an error), whatever it was before (with consolidated
    # protocols, a struct defined at run time dispatches to Any even while its derived module is loaded).
    assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode([value])
    assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode(%{"k" => value}, pretty: true)
    assert before == ~s([{"a":1}]) or match?(%Protocol.UndefinedError{}, before)
  end
end
