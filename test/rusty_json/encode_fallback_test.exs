defmodule RustyJson.EncodeFallbackTest do
  # A struct with no RustyJson.Encoder implementation is written by its Jason.Encoder implementation (Jason's
  # stand-in, test/support/jason_stand_in.ex, where Jason is not loaded) or its JSON.Encoder one (Elixir 1.18+,
  # test/rusty_json/json_encoder_test.exs). Their text obeys `escape:`, `sort_keys:` and `maps: :strict` as
  # RustyJson's own output does.
  use ExUnit.Case, async: true

  import RustyJson.Helpers, only: [json_map: 1]

  alias RustyJson.{EncodeError, OrderedObject}
  alias RustyJson.Test.{JasonFails, JasonRaw, JasonText}

  @modes [:javascript_safe, :html_safe, :unicode_safe]
  @text "é\u2028\u2029</script><!--\u{1F600}\"\\\n/"

  # What JasonRaw writes, as RustyJson writes it: in its order, or as a map (for `sort_keys`).
  defp as_written(text) do
    inner = OrderedObject.new([{"d", 1}, {"c", 2}])
    alpha = OrderedObject.new([{"y", [inner]}, {"x", text}])
    OrderedObject.new([{"zed", text}, {"alpha", alpha}, {text, 0}])
  end

  defp as_map(text),
    do: %{"zed" => text, "alpha" => %{"y" => [%{"d" => 1, "c" => 2}], "x" => text}, text => 0}

  test "the strings of a Jason.Encoder implementation's text are escaped in the call's mode" do
    raw = %JasonRaw{text: @text}

    for escape <- @modes do
      assert RustyJson.encode!(raw, escape: escape) ==
               RustyJson.encode!(as_written(@text), escape: escape)

      assert RustyJson.encode!([raw, %{"k" => raw}], escape: escape) ==
               RustyJson.encode!([as_written(@text), %{"k" => as_written(@text)}], escape: escape)
    end

    html = RustyJson.encode!(%{"a" => [raw]}, escape: :html_safe)
    refute html =~ "</"
    refute html =~ "<!--"
    refute html =~ "\u2028"
    assert RustyJson.decode!(html) == %{"a" => [RustyJson.decode!(RustyJson.encode!(raw))]}
    assert RustyJson.encode!(raw, escape: :unicode_safe) =~ ~r/\A[\x20-\x7E]*\z/
  end

  test "sort_keys sorts every object of a Jason.Encoder implementation's text" do
    raw = %JasonRaw{text: "é"}
    assert RustyJson.encode!(raw) == ~s({"zed":"é","alpha":{"y":[{"d":1,"c":2}],"x":"é"},"é":0})

    assert RustyJson.encode!(raw, sort_keys: true) ==
             ~s({"alpha":{"x":"é","y":[{"c":2,"d":1}]},"zed":"é","é":0})

    for escape <- [:json | @modes] do
      assert RustyJson.encode!([raw], sort_keys: true, escape: escape) ==
               RustyJson.encode!([as_map("é")], sort_keys: true, escape: escape)
    end
  end

  test "maps: :strict refuses a key a Jason.Encoder implementation writes twice" do
    twice = %JasonText{text: ~S({"a":1,"b":{"c":1,"\u0063":2}})}

    assert {:error, %EncodeError{message: "duplicate key: c"}} =
             RustyJson.encode([twice], maps: :strict)

    assert {:error, %EncodeError{message: "duplicate key: c"}} =
             RustyJson.encode([twice], maps: :strict, sort_keys: true, escape: :html_safe)

    assert RustyJson.encode!([twice]) == ~S([{"a":1,"b":{"c":1,"\u0063":2}}])
    assert RustyJson.encode!([%JasonText{text: ~s({"a":1})}], maps: :strict) == ~s([{"a":1}])
  end

  test "invalid JSON from a Jason.Encoder implementation, or its Jason.EncodeError, is a RustyJson.EncodeError" do
    bad = %JasonText{text: "[1 2]"}

    for opts <- [
          [escape: :html_safe],
          [sort_keys: true],
          [maps: :strict],
          [escape: :unicode_safe, pretty: true]
        ] do
      assert {:error, %EncodeError{message: message}} = RustyJson.encode(%{"x" => bad}, opts)

      assert message ==
               "the Jason.Encoder implementation of RustyJson.Test.JasonText returned invalid JSON: " <>
                 ~s[unexpected byte at position 3: 0x32 ("2")]
    end

    for opts <- [[], [escape: :html_safe]] do
      assert {:error, %EncodeError{message: "invalid byte 0xFF"}} =
               RustyJson.encode([%JasonFails{message: "invalid byte 0xFF"}], opts)
    end
  end

  test "with the default options a Jason.Encoder implementation's text is written as it is" do
    # Nothing is spent on it: its whitespace stays.
    assert RustyJson.encode!([%JasonText{text: ~s({ "b" : 1, "a" : "</" })}]) ==
             ~s([{ "b" : 1, "a" : "</" }])
  end

  test "long texts are rewritten too" do
    # Over 64 KiB, the text is rewritten on a dirty scheduler.
    items = for i <- 1..5_000, do: %{"v" => "</#{i}>", "k" => [i, i * 0.5]}
    text = RustyJson.encode!(items)
    assert byte_size(text) > 64 * 1024

    for opts <- [[escape: :html_safe, sort_keys: true], [escape: :unicode_safe, maps: :strict]] do
      assert RustyJson.encode!([%JasonText{text: text}], opts) == RustyJson.encode!([items], opts)
    end
  end

  test "pretty and compress lay out and compress the rewritten text" do
    raw = %JasonRaw{text: "</"}

    assert RustyJson.encode!([raw], escape: :html_safe, pretty: true) ==
             RustyJson.encode!([as_written("</")], escape: :html_safe, pretty: true)

    opts = [escape: :html_safe, sort_keys: true]
    assert {:ok, gz} = RustyJson.encode([raw], [compress: :gzip] ++ opts)
    assert :zlib.gunzip(gz) == RustyJson.encode!([as_map("</")], opts)
  end

  # Every way a string reaches the output: values, map keys, derived and hand-written RustyJson.Encoder
  # implementations, ordered objects, fragments of encoder functions (`Fragment.new/1` with a function,
  # `RustyJson.Helpers`), and the Jason.Encoder and JSON.Encoder (Elixir 1.18+) fallbacks.
  defp every_path(text) do
    [
      text,
      %{text => text, :key => [text]},
      %RustyJson.Test.Derived{name: text, age: [text], email: %{text => text}},
      %RustyJson.Test.Money{amount: text, currency: %{text => text}},
      %RustyJson.Test.Envelope{body: text, meta: text},
      %RustyJson.Test.Point{x: text, y: text},
      OrderedObject.new([{text, text}]),
      RustyJson.Fragment.new(fn opts -> RustyJson.Encode.string(text, opts) end),
      json_map(a: text, b: [text]),
      %JasonRaw{text: text},
      %{"deep" => [%JasonRaw{text: text}]}
    ] ++ json_encoder_structs(text)
  end

  if Code.ensure_loaded?(JSON.Encoder) do
    defp json_encoder_structs(text) do
      [
        %RustyJson.Test.JSONSelfWritten{text: text},
        %RustyJson.Test.JSONDerived{name: text, tags: [text], nested: %{text => text}},
        %RustyJson.Test.JSONUnsorted{b: text, a: [%RustyJson.Test.JSONSelfWritten{text: text}]},
        %RustyJson.Test.JSONMap{map: %{text => text}}
      ]
    end
  else
    defp json_encoder_structs(_text), do: []
  end

  test "</script> never survives escape: :html_safe, whatever writes the string" do
    text = "</script><!--\u2028\u2029"
    doc = every_path(text)
    value = RustyJson.decode!(RustyJson.encode!(doc))

    for pretty <- [false, true], sort <- [false, true], maps <- [:naive, :strict] do
      opts = [escape: :html_safe, pretty: pretty, sort_keys: sort, maps: maps]
      html = RustyJson.encode!(doc, opts)
      refute html =~ "</", inspect(opts)
      refute html =~ "<!--", inspect(opts)
      refute html =~ "\u2028", inspect(opts)
      refute html =~ "\u2029", inspect(opts)
      # Every path wrote its strings (none was dropped).
      assert RustyJson.decode!(html) == value
    end
  end
end
