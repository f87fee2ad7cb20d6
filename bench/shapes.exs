# The app-shaped documents of bench/inputs.exs (`app_shapes/2`) alone: RustyJson, jiffy and the ETF floor, both
# directions, paired ratios. Quick to rerun while working on one shape; `make bench` has them in the full report.
#   mix run bench/shapes.exs [--seed N] [--scale F] [--rounds N] [--only NAME]
Code.require_file("inputs.exs", __DIR__)
Code.require_file("harness.exs", __DIR__)
alias RustyJson.Bench.{Harness, Inputs}

{opts, _, _} =
  OptionParser.parse(System.argv(),
    strict: [seed: :integer, scale: :float, rounds: :integer, only: :string]
  )

inputs =
  for {name, _, _} = input <- Inputs.app_shapes(opts[:seed] || 44, opts[:scale] || 1.0),
      opts[:only] in [nil, name],
      do: input

jiffy_decode = fn json -> :jiffy.decode(json, [:return_maps, :use_nil]) end

cases =
  Enum.flat_map(inputs, fn {name, json, term} ->
    etf = :erlang.term_to_binary(term)

    [
      {{name, :encode},
       [
         {"RustyJson", fn -> RustyJson.encode!(term) end},
         {"jiffy", fn -> :jiffy.encode(term, [:use_nil]) end},
         {"ETF", fn -> :erlang.term_to_binary(term) end}
       ]},
      {{name, :decode},
       [
         {"RustyJson", fn -> RustyJson.decode!(json) end},
         {"jiffy", fn -> jiffy_decode.(json) end},
         {"ETF", fn -> :erlang.binary_to_term(etf) end}
       ]}
    ]
  end)

stats = Harness.compare_all(cases, rounds: opts[:rounds] || 15)

IO.puts(
  "| shape | bytes | direction | RustyJson | / jiffy | / ETF floor |\n| --- | ---: | --- | ---: | ---: | ---: |"
)

for {name, json, _} <- inputs, dir <- [:encode, :decode] do
  s = stats[{name, dir}]

  IO.puts(
    "| #{name} | #{byte_size(json)} | #{dir} | #{Harness.fmt_us(s["RustyJson"].median_us)} | " <>
      "#{Float.round(Harness.ratio(s, "RustyJson", "jiffy"), 2)} | #{Float.round(Harness.ratio(s, "RustyJson", "ETF"), 2)} |"
  )
end
