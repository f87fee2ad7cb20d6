# The main job (`make demo`): encode and decode real and generated documents with RustyJson and jiffy,
# printing per document its size and the median time of each. Run: mix run bench/demo.exs
Code.require_file("../test/support/apt_libs.exs", __DIR__)
Code.require_file("harness.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Harness, Inputs}

inputs = Inputs.shared() ++ Inputs.generated(report_mb: 2) ++ Inputs.micro()

if Inputs.shared() == [] do
  IO.puts("(no public documents under #{Inputs.shared_dir()}: generated documents only)\n")
end

IO.puts(
  String.pad_trailing("document", 22) <>
    Enum.map_join(
      ["size", "RJ encode", "jiffy enc", "RJ decode", "jiffy dec"],
      &String.pad_leading(&1, 12)
    )
)

for {name, json, term} <- inputs do
  enc =
    Harness.compare(
      [
        rusty_json: fn -> RustyJson.encode!(term) end,
        jiffy: fn -> :jiffy.encode(term, [:use_nil]) end
      ],
      rounds: 7,
      batch_ms: 10
    )

  dec =
    Harness.compare(
      [
        rusty_json: fn -> RustyJson.decode!(json) end,
        jiffy: fn -> :jiffy.decode(json, [:return_maps, :use_nil]) end
      ],
      rounds: 7,
      batch_ms: 10
    )

  cells = [
    Harness.fmt_bytes(byte_size(json)),
    Harness.fmt_us(enc.rusty_json.median_us),
    Harness.fmt_us(enc.jiffy.median_us),
    Harness.fmt_us(dec.rusty_json.median_us),
    Harness.fmt_us(dec.jiffy.median_us)
  ]

  IO.puts(String.pad_trailing(name, 22) <> Enum.map_join(cells, &String.pad_leading(&1, 12)))
end
