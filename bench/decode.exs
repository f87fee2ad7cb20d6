# Decode benchmark: RustyJson vs jiffy vs :erlang.binary_to_term/1 of the same term's ETF, interleaved in one
# run, on every public document, generated documents and ruby/json's micro inputs; plus keys: :intern on
# same-shaped and unique-key documents. Prints a Markdown table (medians and ratios).
# Run: mix run bench/decode.exs   (ROUNDS=n for more or fewer rounds, ONLY=a,b to keep documents whose names contain a or b)
# (The default keys use the key cache for inputs of 512 bytes or more, so keys: :intern differs from them only
# on shorter inputs.)
# PART=threshold measures the line between the in-heap and the detached decode instead: one input through the
# normal-scheduler NIF (`decode/2`, terms on the caller's heap), the detached one (`decode_detached/3`, terms in
# its own environment, result sent as a message) and the DirtyCpu one, for growing sizes of an API-like document
# (the densest kind: most terms per byte).
Code.require_file("../test/support/apt_libs.exs", __DIR__)
Code.require_file("harness.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Harness, Inputs}

rounds = String.to_integer(System.get_env("ROUNDS", "15"))
only = System.get_env("ONLY")

# Each case runs in a fresh process, as a decode in a request process would: its heap starts small, so the
# NIF's terms go to heap fragments on either scheduler.
in_fresh_process = fn fun ->
  task = Task.async(fun)
  Task.await(task, :infinity)
end

if System.get_env("PART") == "threshold" do
  detached = fn json ->
    ref = make_ref()
    :ok = RustyJson.Native.decode_detached(json, 0, ref)

    receive do
      {^ref, result} -> result
    end
  end

  IO.puts(
    "| input size | in-heap (normal) | detached (normal) | dirty CPU | detached / in-heap | dirty / in-heap |"
  )

  IO.puts("| ---: | ---: | ---: | ---: | ---: | ---: |")

  for n <- [3, 12, 50, 100, 200, 400, 800, 1200, 1600, 3200] do
    json = IO.iodata_to_binary(:jiffy.encode(Inputs.api_list(n)))

    r =
      in_fresh_process.(fn ->
        Harness.compare(
          [
            normal: fn -> RustyJson.Native.decode(json, 0) end,
            detached: fn -> detached.(json) end,
            dirty: fn -> RustyJson.Native.decode_dirty(json, 0) end
          ],
          rounds: rounds,
          batch_ms: 20
        )
      end)

    ratio = &:erlang.float_to_binary(Harness.ratio(r, &1, :normal), decimals: 2)

    IO.puts(
      "| #{Harness.fmt_bytes(byte_size(json))} | #{Harness.fmt_us(r.normal.median_us)} | " <>
        "#{Harness.fmt_us(r.detached.median_us)} | #{Harness.fmt_us(r.dirty.median_us)} | " <>
        "#{ratio.(:detached)} | #{ratio.(:dirty)} |"
    )
  end

  System.halt(0)
end

same_shaped =
  for i <- 1..10_000 do
    %{
      "id" => i,
      "name" => "item #{i}",
      "active" => rem(i, 2) == 0,
      "price" => i * 0.5,
      "tags" => ["a", "b"],
      "owner" => %{"id" => rem(i, 97), "login" => "user#{rem(i, 97)}"}
    }
  end

unique_keys =
  for i <- 1..2_000 do
    Map.new(1..5, fn j -> {"k#{i}_#{j}", j} end)
  end

inputs =
  Inputs.shared() ++
    [
      Inputs.from_term("report_10mb", Inputs.report(10)),
      Inputs.from_term("same_shaped_10000", same_shaped),
      Inputs.from_term("unique_keys_10000", unique_keys)
    ] ++
    Enum.reject(Inputs.generated(report_mb: 1), fn {n, _, _} -> n == "report_1mb" end) ++
    Inputs.micro()

# Keep only the JSON text (an off-heap binary): each document is measured in a fresh process that holds just its
# own terms, so garbage collections triggered by one library do not copy every other document's terms.
inputs =
  for {name, json, _term} <- inputs,
      only == nil or Enum.any?(String.split(only, ","), &String.contains?(name, &1)),
      do: {name, json}

:erlang.garbage_collect()

fmt_ratio = fn r -> :erlang.float_to_binary(r, decimals: 2) end

IO.puts("""
Machine: #{:erlang.system_info(:system_architecture)}, #{System.schedulers_online()} schedulers, \
OTP #{System.otp_release()}, Elixir #{System.version()}. Date: #{Date.utc_today()}. \
Command: mix run bench/decode.exs (#{rounds} rounds).

| document | size | RustyJson | jiffy | binary_to_term | RJ / jiffy | RJ / b2t |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |\
""")

intern_rows =
  for {name, json} <- inputs do
    intern? = name in ["same_shaped_10000", "unique_keys_10000", "twitter", "citm_catalog"]

    r =
      in_fresh_process.(fn ->
        term = RustyJson.decode!(json)
        etf = :erlang.term_to_binary(term)
        ^term = :erlang.binary_to_term(etf)

        funs =
          [
            rusty_json: fn -> RustyJson.decode!(json) end,
            jiffy: fn -> :jiffy.decode(json, [:return_maps, :use_nil]) end,
            binary_to_term: fn -> :erlang.binary_to_term(etf) end
          ] ++
            if(intern?, do: [intern: fn -> RustyJson.decode!(json, keys: :intern) end], else: [])

        Harness.compare(funs, rounds: rounds, batch_ms: 20)
      end)

    rj = r.rusty_json.median_us

    IO.puts(
      "| #{name} | #{Harness.fmt_bytes(byte_size(json))} | #{Harness.fmt_us(rj)} | " <>
        "#{Harness.fmt_us(r.jiffy.median_us)} | #{Harness.fmt_us(r.binary_to_term.median_us)} | " <>
        "#{fmt_ratio.(Harness.ratio(r, :rusty_json, :jiffy))} | " <>
        "#{fmt_ratio.(Harness.ratio(r, :rusty_json, :binary_to_term))} |"
    )

    if intern?, do: {name, rj, r.intern.median_us, Harness.ratio(r, :intern, :rusty_json)}
  end

IO.puts("""

`keys: :intern` vs the default (same run):

| document | default | keys: :intern | intern / default |
| --- | ---: | ---: | ---: |\
""")

for {name, rj, intern, ratio} <- Enum.reject(intern_rows, &is_nil/1) do
  IO.puts(
    "| #{name} | #{Harness.fmt_us(rj)} | #{Harness.fmt_us(intern)} | #{fmt_ratio.(ratio)} |"
  )
end
