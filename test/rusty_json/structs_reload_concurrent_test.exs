defmodule RustyJson.StructsReloadConcurrentTest do
  # Modules loaded while other processes encode (issue 55: a Phoenix app reloading code while serving requests).
  # After a load returns, every encode that starts later writes what `RustyJson.Encoder` dispatches to in the code
  # loaded then: derived with its `only:`/`except:`, custom, or none; with the protocol consolidated and not.
  # Every count here is of loads and encodes, never of time.
  #
  # Not async: it replaces the protocol module itself (consolidated, then not) and modules other tests could see.
  use ExUnit.Case, async: false

  # Counts bound the work; this only keeps a slow machine (each load waits on the code server) from failing it.
  @moduletag timeout: 300_000

  alias RustyJson.Test.Churned

  @protocol RustyJson.Encoder
  @impl_module RustyJson.Encoder.RustyJson.Test.Churned
  # Processes encoding while the loads run, and loads of each kind.
  @encoders 8
  @rounds 200
  # The main tests' encoders pause this long (ms) between encodes. Always runnable, they made each purge and load
  # wait 20-80 ms (180 s a run): the code purger and the literal area collector visit every process, and a busy
  # low-priority one takes its turn behind the others; paused, a load takes under 1 ms and still has encodes
  # running through it (counted: `overlapped`).
  @pause 1

  # Encoding processes of a test that failed stop with it (each test's own are stopped and counted at its end).
  setup do
    on_exit(fn ->
      for pid <- Process.list(), Process.info(pid, :dictionary) |> dictionary_key?() do
        Process.exit(pid, :kill)
      end
    end)
  end

  defp dictionary_key?({:dictionary, dict}),
    do: Keyword.has_key?(dict, :rusty_json_reload_encoder)

  defp dictionary_key?(_), do: false

  setup_all do
    {@protocol, loaded, _path} = :code.get_object_code(@protocol)
    ebin = Application.app_dir(:rusty_json, "ebin")
    plain = File.read!(Path.join(ebin, "#{@protocol}.beam"))

    consolidated =
      if Protocol.consolidated?(@protocol) do
        loaded
      else
        {:ok, binary} = Protocol.consolidate(@protocol, Protocol.extract_impls(@protocol, [ebin]))

        binary
      end

    on_exit(fn ->
      load!(@protocol, loaded)

      for module <- [@impl_module, Churned, RustyJson.Encoder.RustyJson.Test.ReloadThing] do
        purge!(module)
        :code.delete(module)
        purge!(module)
      end

      {:module, _} = :code.ensure_loaded(Churned)
      {:module, _} = :code.ensure_loaded(@impl_module)
    end)

    %{protocols: %{true => consolidated, false => plain}}
  end

  # The forms `Churned` is loaded in: source compiled once (each a struct module and its implementation),
  # loaded from the binaries in the loop.
  @variants [
    derived_only: """
    defmodule RustyJson.Test.Churned do
      @derive {RustyJson.Encoder, only: [:id, :name]}
      defstruct [:id, :name, :extra]
    end
    """,
    # Other fields, as many, and another `only:`: a stale template has the struct's size.
    derived_other_fields: """
    defmodule RustyJson.Test.Churned do
      @derive {RustyJson.Encoder, only: [:extra, :id]}
      defstruct [:id, :extra, :more]
    end
    """,
    derived_except: """
    defmodule RustyJson.Test.Churned do
      @derive {RustyJson.Encoder, except: [:name]}
      defstruct [:id, :name, :extra]
    end
    """,
    custom_map: """
    defmodule RustyJson.Test.Churned do
      defstruct [:id, :name, :extra]
    end

    defimpl RustyJson.Encoder, for: RustyJson.Test.Churned do
      def encode(%{id: id}, opts), do: RustyJson.Encode.map(%{"custom" => id}, opts)
    end
    """,
    custom_iodata: """
    defmodule RustyJson.Test.Churned do
      defstruct [:id, :name, :extra]
    end

    defimpl RustyJson.Encoder, for: RustyJson.Test.Churned do
      def encode(%{id: id}, _opts), do: [?", "raw-", Integer.to_string(id), ?"]
    end
    """
  ]

  for consolidated? <- [true, false] do
    test "loads of every kind while #{@encoders} processes encode (consolidated: #{consolidated?})",
         %{
           protocols: protocols
         } do
      use_protocol(protocols, unquote(consolidated?))
      variants = compile_variants()
      encodes = :counters.new(1, [:write_concurrency])
      make = fn -> churned(1) end
      encoders = start_encoders(@encoders, make, @pause, encodes)

      loads =
        for round <- 1..@rounds, kind <- Keyword.keys(@variants) ++ [:purged], do: {round, kind}

      {encoders, overlapped} =
        Enum.reduce(loads, {encoders, 0}, fn {round, kind}, {encoders, overlapped} ->
          before = :counters.get(encodes, 1)
          load_kind(kind, variants)
          overlapped = overlapped + if :counters.get(encodes, 1) > before, do: 1, else: 0
          value = churned(round)
          assert_encodes(value, expected(kind, value), {round, kind})
          {keep_encoding(encoders, make, @pause, encodes), overlapped}
        end)

      stop_encoders(encoders)

      # Encodes ran through the loads: other processes finished encodes while many loads were under way (964 to
      # 1,020 of 1,200 here, OTP 25, fast paths on and off).
      assert overlapped * 4 >= length(loads), "#{overlapped} of #{length(loads)} loads"
    end
  end

  # The report's repro: a struct module defined again (`Code.compile_string/1`) with other fields and `only:`
  # while two processes encode it; before the fix a template registered from the old code by an encoding process
  # outlived the load. Defined at run time, the struct is not among the consolidated protocol's: there it raises
  # Protocol.UndefinedError after every load (as Jason does), and not consolidated it writes the loaded fields.
  # Rounds of the repro (each two loads). On the code before the fix (220d5a0) it failed 11 runs of 11 (OTP 25, fast
  # paths on and off): consolidated in round 1, not consolidated by round 2 to 9 (the race); 40 rounds leave a
  # slower machine's race room to show.
  @repro_rounds 40

  for consolidated? <- [false, true] do
    test "the repro: a struct derived again while two processes encode it (consolidated: #{consolidated?})",
         %{protocols: protocols} do
      use_protocol(protocols, unquote(consolidated?))
      thing = RustyJson.Test.ReloadThing
      make = fn -> struct(thing, id: 1, name: "n", extra: "e") end

      encoders =
        Enum.reduce(1..@repro_rounds, start_encoders(2, make, @pause, nil), fn round, encoders ->
          compile("""
          defmodule RustyJson.Test.ReloadThing do
            @derive {RustyJson.Encoder, only: [:id, :name]}
            defstruct [:id, :name, :other]
          end
          """)

          check_thing(thing, ~s({"id":1,"name":"n"}), unquote(consolidated?), round)

          compile("""
          defmodule RustyJson.Test.ReloadThing do
            @derive {RustyJson.Encoder, only: [:extra, :id]}
            defstruct [:id, :name, :extra]
          end
          """)

          check_thing(thing, ~s({"extra":"e","id":1}), unquote(consolidated?), round)
          keep_encoding(encoders, make, @pause, nil)
        end)

      stop_encoders(encoders)
    end
  end

  defp check_thing(thing, json, consolidated?, round) do
    value = struct(thing, id: 1, name: "n", extra: "e")

    if consolidated? do
      assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode(value), "round #{round}"
      assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode([value]), "round #{round}"
    else
      assert RustyJson.encode!(value) == json, "round #{round}"
      assert RustyJson.encode!([value, value]) == "[#{json},#{json}]", "round #{round}"
    end
  end

  defp use_protocol(protocols, consolidated?) do
    load!(@protocol, Map.fetch!(protocols, consolidated?))
    assert Protocol.consolidated?(@protocol) == consolidated?
  end

  defp compile_variants do
    Map.new(@variants, fn {kind, source} -> {kind, compile(source)} end)
  end

  # Compiles (and loads) `source`; its modules' binaries. (Redefining modules, and implementations defined after
  # consolidation, warn: not the point here.)
  defp compile(source) do
    ExUnit.CaptureIO.capture_io(:stderr, fn -> send(self(), Code.compile_string(source)) end)
    assert_received modules
    modules
  end

  defp load_kind(:purged, _variants) do
    purge!(@impl_module)
    :code.delete(@impl_module)
    purge!(@impl_module)
  end

  defp load_kind(kind, variants) do
    for {module, binary} <- Map.fetch!(variants, kind), do: load!(module, binary)
  end

  defp load!(module, binary) do
    purge!(module)
    assert {:module, ^module} = :code.load_binary(module, ~c"nofile", binary)
  end

  # Old code removed (as Elixir and code reloaders do it: an encoding process still running it is killed, and
  # `keep_encoding/2` starts another).
  defp purge!(module) do
    :code.purge(module)
    refute :erlang.check_old_code(module)
  end

  # What the implementation loaded by `kind` writes for `value` (the purged one comes back from disk).
  defp expected(:derived_only, value), do: object(value, [:id, :name])
  defp expected(:derived_other_fields, value), do: object(value, [:extra, :id])

  # `except:` writes the other fields in `Map.keys/1` order of the VM that compiled it: this one.
  defp expected(:derived_except, value),
    do: object(value, Map.keys(value) -- [:__struct__, :name])

  defp expected(:custom_map, %{id: id}), do: {~s({"custom":#{id}}), ~s({"custom":#{id}})}
  defp expected(:custom_iodata, %{id: id}), do: {~s("raw-#{id}"), ~s("raw-#{id}")}
  defp expected(:purged, value), do: object(value, [:name])

  # The text of `fields` of `value` in order, and sorted by name (`sort_keys: true`).
  defp object(value, fields) do
    pairs = for field <- fields, do: {Atom.to_string(field), Map.fetch!(value, field)}
    {json(pairs), json(Enum.sort(pairs))}
  end

  defp json(pairs), do: RustyJson.encode!(RustyJson.OrderedObject.new(pairs))

  defp assert_encodes(value, {json, sorted}, at) do
    assert RustyJson.encode(value) == {:ok, json}, inspect(at)

    assert RustyJson.encode([value, %{"k" => value}]) == {:ok, ~s([#{json},{"k":#{json}}])},
           inspect(at)

    assert RustyJson.encode!(%{"k" => [value]}, sort_keys: true) == ~s({"k":[#{sorted}]}),
           inspect(at)
  end

  # A value of whatever shape `Churned` has now.
  defp churned(id), do: struct(Churned, id: id, name: "n", extra: "e", more: "m")

  # `count` processes encoding `value.()` in a loop, pausing `pause` ms between encodes, each counted in
  # `encodes` (a `:counters` reference, or nil).
  defp start_encoders(count, value, pause, encodes) do
    for _ <- 1..count do
      spawn(fn -> encode_loop(value, pause, encodes) end)
    end
  end

  # Encodes until told to stop; results and errors (a module between two loads) do not matter here. At low
  # priority: busy at normal priority they would starve the loads (and the code server) on a machine of few cores;
  # so they still run beside each load on the other cores and between its steps.
  defp encode_loop(value, pause, encodes) do
    Process.flag(:priority, :low)
    Process.put(:rusty_json_reload_encoder, true)
    encode_loop_(value, pause, encodes)
  end

  defp encode_loop_(value, pause, encodes) do
    try do
      v = value.()
      RustyJson.encode([v, v])
      RustyJson.encode(%{"k" => v}, sort_keys: true)
    catch
      _, _ -> :ok
    end

    if encodes, do: :counters.add(encodes, 1, 1)

    receive do
      {:stop, from} -> send(from, {:stopped, self()})
    after
      pause -> encode_loop_(value, pause, encodes)
    end
  end

  # The encoders, those a purge killed replaced: as many encode through every load.
  defp keep_encoding(encoders, value, pause, encodes) do
    for pid <- encoders do
      if Process.alive?(pid), do: pid, else: spawn(fn -> encode_loop(value, pause, encodes) end)
    end
  end

  defp stop_encoders(encoders) do
    for pid <- encoders, do: send(pid, {:stop, self()})
    for pid <- encoders, Process.alive?(pid), do: assert_receive({:stopped, ^pid})
  end
end
