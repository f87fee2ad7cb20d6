# keys: :intern against the default keys on arrays of same-shaped objects (also wide ones), objects of unique keys
# and two public documents, timed by the project's harness (`Harness.compare_all`: fresh process per batch, the
# two options interleaved round by round, ratios from per-round pairs).
# Run: mix run bench/intern.exs   (ROUNDS=n, ONLY=a,b to keep inputs whose names contain a or b)
# (Since 6630666 the default keys use the same cache for inputs of 512 bytes or more, so the two
# differ only below that; `keys: :copy` is the no-cache baseline, as in the report.)
Code.require_file("../test/support/apt_libs.exs", __DIR__)
for file <- ~w(harness inputs suite), do: Code.require_file("#{file}.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Harness, Inputs, Suite}

rounds = String.to_integer(System.get_env("ROUNDS", "15"))
only = System.get_env("ONLY")

# Arrays of wide same-shaped objects: keys that differ in one byte, more of them than the cache's first window.
wide = fn n, k ->
  Inputs.from_term("wide_#{n}x#{k}", for(i <- 1..n, do: Map.new(1..k, &{"field_#{&1}", i * &1})))
end

# Only the JSON texts are kept (off-heap binaries), so no batch process holds another input's terms.
inputs =
  (for({"keys", name, json, _term} <- Suite.inputs(:full), do: {name, json}) ++
     for(
       {name, json, _term} <- [wide.(100, 20), wide.(1000, 20)] ++ Inputs.shared(),
       name in ["wide_100x20", "wide_1000x20", "twitter", "citm_catalog"],
       do: {name, json}
     ))
  |> Enum.filter(fn {name, _} ->
    only == nil or Enum.any?(String.split(only, ","), &String.contains?(name, &1))
  end)

cases =
  for {name, json} <- inputs do
    {name,
     [
       {"default", fn -> RustyJson.decode!(json) end},
       {"intern", fn -> RustyJson.decode!(json, keys: :intern) end}
     ]}
  end

stats = Harness.compare_all(cases, rounds: rounds, batch_ms: 20, long_batch_ms: 100)

IO.puts("| input | size | default | keys: :intern | intern / default |")
IO.puts("| --- | ---: | ---: | ---: | ---: |")

for {name, json} <- inputs do
  s = stats[name]
  ratio = :erlang.float_to_binary(Harness.ratio(s, "intern", "default"), decimals: 2)

  IO.puts(
    "| #{name} | #{Harness.fmt_bytes(byte_size(json))} | #{Harness.fmt_us(s["default"].median_us)} | " <>
      "#{Harness.fmt_us(s["intern"].median_us)} | #{ratio} |"
  )
end
