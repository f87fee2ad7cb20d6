# The best of N encodes and decodes of one app-shaped document (bench/inputs.exs `app_shapes/2`), jiffy's encode
# beside it: for comparing two builds, run alternately from each build's checkout with this checkout's inputs.
#   taskset -c 1 mix run --no-compile PATH/TO/bench/min_time.exs SHAPE [N]     e.g. event_records 40
Code.require_file("best_of.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)
[name | rest] = System.argv()
n = String.to_integer(List.first(rest) || "40")
{_, json, term} = Enum.find(RustyJson.Bench.Inputs.app_shapes(), fn {nm, _, _} -> nm == name end)

best = &RustyJson.Bench.BestOf.run(&1, n)

e = best.(fn -> RustyJson.encode!(term) end)
j = best.(fn -> :jiffy.encode(term, [:use_nil]) end)
d = best.(fn -> RustyJson.decode!(json) end)

IO.puts(
  "#{File.cwd!()} #{name}: encode #{e} µs (jiffy #{j}, #{Float.round(e / max(j, 1), 3)}), decode #{d} µs"
)
