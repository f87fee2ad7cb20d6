defmodule RustyJson.ReadmeExamples do
  @moduledoc false
  # An example is an `iex>` line (with `...>` continuations) inside an elixir code block, followed by its
  # expected result, or by `** (Exception) message` when it raises, or by nothing when it is a match.

  def parse(text) do
    text
    |> String.split("\n")
    |> Enum.with_index(1)
    |> Enum.reduce({[], nil, false}, &collect/2)
    |> then(fn {acc, current, _} -> finish(acc, current) end)
    |> Enum.reverse()
  end

  defp collect({line, n}, {acc, current, in_elixir}) do
    trimmed = String.trim(line)

    cond do
      trimmed == "```elixir" -> {acc, nil, true}
      String.starts_with?(trimmed, "```") -> {finish(acc, current), nil, false}
      not in_elixir -> {acc, current, false}
      String.starts_with?(trimmed, "iex> ") -> {finish(acc, current), start(trimmed, n), true}
      current == nil -> {acc, nil, true}
      String.starts_with?(trimmed, "...> ") -> {acc, append_code(current, trimmed), true}
      trimmed == "" -> {finish(acc, current), nil, true}
      true -> {acc, %{current | expected: [trimmed | current.expected]}, true}
    end
  end

  defp start("iex> " <> code, n), do: %{line: n, code: [code], expected: []}
  defp append_code(ex, "...> " <> code), do: %{ex | code: [code | ex.code]}

  defp finish(acc, nil), do: acc

  defp finish(acc, ex) do
    code = ex.code |> Enum.reverse() |> Enum.join("\n")
    [%{ex | code: code, expected: ex.expected |> Enum.reverse() |> Enum.join("\n")} | acc]
  end
end

defmodule RustyJson.ReadmeTest do
  # Runs every `iex>` example of README.md and of the guides, as doctests do (ExUnit's doctest_file/2 needs
  # Elixir 1.15).
  use ExUnit.Case, async: true

  @root Path.expand("..", __DIR__)
  @files ["README.md" | @root |> Path.join("guides/*.md") |> Path.wildcard() |> Enum.sort()]
         |> Enum.map(&Path.relative_to(&1, @root))

  for file <- @files, do: @external_resource(Path.join(@root, file))

  examples =
    for file <- @files,
        ex <- RustyJson.ReadmeExamples.parse(File.read!(Path.join(@root, file))),
        do: Map.put(ex, :file, file)

  test "the options guide has examples for every encode and decode option" do
    code =
      unquote(Macro.escape(examples))
      |> Enum.filter(&(&1.file == "guides/options.md"))
      |> Enum.map_join("\n", & &1.code)

    for option <-
          ~w(escape: maps: pretty: sort_keys: compress: max_output_bytes: protocol: keys: strings:
                     floats: objects: duplicate_keys: max_depth: decoding_integer_digit_limit: max_bytes:
                     validate_strings:),
        do: assert(code =~ option, "no options guide example uses #{option}")

    for value <- ~w(:javascript_safe :html_safe :unicode_safe :strict :atoms :atoms! :copy :intern
                    :ordered_objects),
        do: assert(code =~ value, "no options guide example uses #{value}")
  end

  for ex <- examples do
    test "#{ex.file} line #{ex.line}: #{ex.code}" do
      ex = unquote(Macro.escape(ex))
      run(ex.code, ex.expected)
    end
  end

  defp run(code, "** (" <> rest) do
    [module, message] = String.split(rest, ") ", parts: 2)
    {module, _} = Code.eval_string(module)

    error =
      try do
        Code.eval_string(code)
        flunk("expected #{inspect(module)} to be raised")
      rescue
        e -> e
      end

    assert error.__struct__ == module
    assert Exception.message(error) == message
  end

  defp run(code, "") do
    # A match: it raises MatchError if the result does not match.
    Code.eval_string(code)
  end

  defp run(code, expected) do
    {actual, _} = Code.eval_string(code)
    {expected, _} = Code.eval_string(expected)
    assert actual == expected
  end
end
