defmodule RustyJson.Bench.Suite do
  @moduledoc false
  # The full benchmark suite: which inputs, which libraries, and how each library encodes and decodes.
  # Peers: jiffy (apt) always; Jason, OTP's :json (OTP 27+) and Elixir's JSON (1.18+) whenever they are loadable.

  alias RustyJson.Bench.Inputs

  @doc "Every input of the suite as {group, name, json, term, decode_opts}."
  def inputs(mode) do
    report_mb = if mode == :quick, do: 2, else: 10
    shapes = if mode == :quick, do: [10, 100, 1000], else: [10, 100, 1_000, 10_000]

    shared = for {name, json, term} <- Inputs.shared(), do: {"public", name, json, term}

    generated =
      for {name, json, term} <- Inputs.generated(report_mb: report_mb),
          do: {"generated", name, json, term}

    homogeneous =
      for n <- shapes, k <- [5, 10] do
        {name, json, term} = Inputs.from_term("same_shape_#{n}x#{k}", same_shape(n, k))
        {"keys", name, json, term}
      end

    unique =
      for n <- [100, 1_000, 5_000] do
        {name, json, term} =
          Inputs.from_term(
            "unique_keys_#{n}",
            Map.new(1..n, &{"k#{&1}_#{rem(&1 * 7919, 10007)}", &1})
          )

        {"keys", name, json, term}
      end

    # Documents shaped as apps send them (issue #44); the full run adds another seed at a quarter of the size.
    variants = if mode == :quick, do: [{44, 1}], else: [{44, 1}, {7, 0.25}]

    apps =
      for {seed, scale} <- variants,
          {name, json, term} <- Inputs.app_shapes(seed, scale),
          do: {"apps", name, json, term}

    # Text with escapes and floats of every kind (issue #50).
    content =
      for {name, json, term} <- Inputs.content_kinds(50, if(mode == :quick, do: 0.25, else: 1)),
          do: {"content", name, json, term}

    micro = for {name, json, term} <- Inputs.micro(), do: {"micro", name, json, term}
    shared ++ generated ++ homogeneous ++ unique ++ apps ++ content ++ micro
  end

  defp same_shape(n, k) do
    keys = Enum.map(1..k, &"field_#{&1}")
    for i <- 1..n, do: Map.new(Enum.with_index(keys), fn {key, j} -> {key, value(i, j)} end)
  end

  defp value(i, j) do
    case rem(j, 4) do
      0 -> i * 10 + j
      1 -> "text #{i}"
      2 -> rem(i + j, 2) == 0
      3 -> i / 8
    end
  end

  @doc "The libraries present in this run, as {name, encode_fun, decode_fun}."
  def libraries do
    base = [
      {"RustyJson", &RustyJson.encode!/1, &RustyJson.decode!/1},
      {"jiffy", &jiffy_encode/1, &jiffy_decode/1}
    ]

    jason =
      if Code.ensure_loaded?(Jason),
        do: [{"Jason", &apply(Jason, :encode!, [&1]), &apply(Jason, :decode!, [&1])}],
        else: []

    otp =
      if Code.ensure_loaded?(:json) and function_exported?(:json, :encode, 1),
        do: [{"OTP json", &otp_encode/1, &otp_decode/1}],
        else: []

    elixir =
      if Code.ensure_loaded?(JSON) and function_exported?(JSON, :encode!, 1),
        do: [{"Elixir JSON", &elixir_encode/1, &elixir_decode/1}],
        else: []

    base ++ jason ++ otp ++ elixir
  end

  @doc "The ETF floor for a term: what copying it through the external term format costs."
  def floor, do: {"ETF floor", &:erlang.term_to_binary/1, &:erlang.binary_to_term/1}

  defp jiffy_encode(term), do: :jiffy.encode(term, [:use_nil])
  defp jiffy_decode(json), do: :jiffy.decode(json, [:return_maps, :use_nil])

  # OTP's :json encodes nil as the atom string "nil"; the comparison is of speed on the same terms. It returns
  # iodata: made a binary, as RustyJson's result is.
  defp otp_encode(term), do: IO.iodata_to_binary(apply(:json, :encode, [term]))
  defp otp_decode(json), do: apply(:json, :decode, [json])

  # Elixir's JSON (1.18+), which returns a binary like RustyJson.
  defp elixir_encode(term), do: apply(JSON, :encode!, [term])
  defp elixir_decode(json), do: apply(JSON, :decode!, [json])
end
