defmodule RustyJson.HostileInputTest do
  # Inputs chosen to break a JSON NIF. Each case runs in a child VM (RustyJson.ChildVM), so a crash of the VM is a
  # failed assertion with the child's output, not a dead test run. Every case must end in a clean result or a
  # clean error. Timings for these inputs are measured by bench/worst_case.exs (make worst-case), not here.
  use ExUnit.Case, async: true

  alias RustyJson.ChildVM

  @moduletag timeout: 600_000

  @shared_bench Path.expand("../../../shared/data/bench", __DIR__)

  # Runs `body` (Elixir code that ends by printing lines) in a child VM and returns its output; fails with the
  # child's output when it did not exit normally.
  defp child!(body) do
    {output, status} = ChildVM.run(body)
    assert status == 0, "child VM exited with #{status}:\n#{output}"
    output
  end

  test "arrays and objects nested 1,000,000 deep decode, and their truncations fail cleanly" do
    output =
      child!("""
      n = 1_000_000
      depth = fn
        f, [x], d -> f.(f, x, d + 1)
        f, %{"a" => x}, d -> f.(f, x, d + 1)
        _, _, d -> d
      end
      arrays = String.duplicate("[", n) <> "1" <> String.duplicate("]", n)
      objects = String.duplicate(~s({"a":), n) <> "1" <> String.duplicate("}", n)
      IO.puts("arrays " <> inspect(depth.(depth, RustyJson.decode!(arrays), 0)))
      IO.puts("objects " <> inspect(depth.(depth, RustyJson.decode!(objects), 0)))
      {:error, %RustyJson.DecodeError{position: p}} = RustyJson.decode(binary_part(arrays, 0, n + 1))
      IO.puts("truncated " <> inspect(p))
      """)

    assert output =~ "arrays 1000000"
    assert output =~ "objects 1000000"
    assert output =~ "truncated 1000001"
  end

  test "lists and maps nested 1,000,000 deep encode" do
    output =
      child!("""
      n = 1_000_000
      list = Enum.reduce(1..n, 1, fn _, acc -> [acc] end)
      map = Enum.reduce(1..n, 1, fn _, acc -> %{"a" => acc} end)
      IO.puts("list " <> inspect(byte_size(RustyJson.encode!(list))))
      IO.puts("map " <> inspect(byte_size(RustyJson.encode!(map))))
      """)

    assert output =~ "list #{2 * 1_000_000 + 1}"
    assert output =~ "map #{6 * 1_000_000 + 1}"
  end

  @tag :shared_data
  test "prefixes of the public documents are errors, never crashes" do
    if File.dir?(@shared_bench) do
      output =
        child!("""
        for path <- Path.wildcard(#{inspect(@shared_bench)} <> "/*.json") do
          doc = File.read!(path)
          size = byte_size(doc)
          # Every prefix of the first 8 KB, then every 499th: all prefixes cost O(size^2) in total.
          cuts = Enum.uniq(Enum.to_list(0..min(size - 1, 8192)) ++ Enum.to_list(8193..(size - 1)//499))
          bad =
            Enum.reject(cuts, fn cut ->
              match?({:error, %RustyJson.DecodeError{}}, RustyJson.decode(binary_part(doc, 0, cut)))
            end)
          IO.puts(Path.basename(path) <> " " <> inspect(length(cuts)) <> " bad " <> inspect(bad))
        end
        """)

      refute output =~ ~r/bad \[\d/, output
      assert length(Regex.scan(~r/bad \[\]/, output)) >= 1
    end
  end

  test "random bytes and mutated documents get clean answers" do
    output =
      child!("""
      :rand.seed(:exsss, {1, 2, 3})
      base = ~s({"a":[1,-2.5e3,"x\\\\u00e9\\\\ud83d\\\\ude00",true,false,null],"b":{"c":"é"}})
      results =
        for i <- 1..30_000 do
          input =
            if rem(i, 2) == 0 do
              :crypto.strong_rand_bytes(:rand.uniform(64))
            else
              at = :rand.uniform(byte_size(base)) - 1
              <<pre::binary-size(at), _, post::binary>> = base
              pre <> <<:rand.uniform(256) - 1>> <> post
            end
          case RustyJson.decode(input) do
            {:ok, _} -> :ok
            {:error, %RustyJson.DecodeError{position: p}} when p <= byte_size(input) -> :error
          end
        end
      IO.puts("answered " <> inspect(length(results)))
      """)

    assert output =~ "answered 30000"
  end

  test "invalid UTF-8 of every class is a clean error in decode and encode" do
    output =
      child!("""
      classes = [
        lone_continuation: <<0x80>>, bad_lead_c0: <<0xC0, 0x80>>, bad_lead_ff: <<0xFF>>, bad_lead_f5: <<0xF5, 0x80, 0x80, 0x80>>,
        overlong_2: <<0xC1, 0xBF>>, overlong_3: <<0xE0, 0x80, 0xAF>>, overlong_4: <<0xF0, 0x80, 0x80, 0xAF>>,
        surrogate: <<0xED, 0xA0, 0x80>>, above_max: <<0xF4, 0x90, 0x80, 0x80>>,
        truncated_2: <<0xC3>>, truncated_3: <<0xE2, 0x82>>, truncated_4: <<0xF0, 0x9F, 0x98>>
      ]
      for {name, bad} <- classes, {where, s} <- [start: bad <> "abc", middle: "ab" <> bad <> "c", finish: "abc" <> bad] do
        {:error, %RustyJson.DecodeError{}} = RustyJson.decode(~s(") <> s <> ~s("))
        {:error, %RustyJson.DecodeError{}} = RustyJson.decode(~s({") <> s <> ~s(":1}))
        {:error, %RustyJson.EncodeError{message: "invalid byte " <> _}} = RustyJson.encode(s)
        {:error, %RustyJson.EncodeError{}} = RustyJson.encode(%{s => 1})
        {:error, %RustyJson.DecodeError{}} = RustyJson.decode(~s(") <> s)
        IO.puts("ok " <> Atom.to_string(name) <> " " <> Atom.to_string(where))
      end
      """)

    assert length(Regex.scan(~r/^ok /m, output)) == 12 * 3, output
  end

  test "a 100 MB string encodes and decodes" do
    output =
      child!("""
      s = String.duplicate("abcdefghi\\n", 10_000_000)
      json = RustyJson.encode!(s)
      IO.puts("encoded " <> inspect(byte_size(json)))
      IO.puts("round trip " <> inspect(RustyJson.decode!(json) == s))
      plain = "\\"" <> String.duplicate("a", 100_000_000) <> "\\""
      IO.puts("decoded " <> inspect(byte_size(RustyJson.decode!(plain))))
      """)

    assert output =~ "encoded #{11 * 10_000_000 + 2}"
    assert output =~ "round trip true"
    assert output =~ "decoded 100000000"
  end

  test "numbers with a million digits" do
    output =
      child!("""
      million = String.duplicate("7", 1_000_000)
      {:error, %RustyJson.DecodeError{token: t}} = RustyJson.decode(million)
      IO.puts("integer token " <> inspect(byte_size(t)))
      IO.puts("fraction " <> inspect(RustyJson.decode!("0." <> million)))
      {:error, %RustyJson.DecodeError{}} = RustyJson.decode("1e" <> million)
      IO.puts("exponent error")
      big = Integer.pow(10, 100_000) + 1
      IO.puts("bignum " <> inspect(RustyJson.encode!(big) == Integer.to_string(big)))
      """)

    assert output =~ "integer token 1000000"
    assert output =~ "fraction 0.7777777777777778"
    assert output =~ "exponent error"
    assert output =~ "bignum true"
  end

  test "an object with 1,000,000 keys decodes and encodes, also with keys: :intern" do
    output =
      child!("""
      n = 1_000_000
      json = "{" <> Enum.map_join(1..n, ",", &~s("k\#{&1}":\#{&1})) <> "}"
      map = RustyJson.decode!(json)
      IO.puts("keys " <> inspect(map_size(map)))
      IO.puts("intern " <> inspect(map_size(RustyJson.decode!(json, keys: :intern))))
      IO.puts("encoded " <> inspect(RustyJson.decode!(RustyJson.encode!(map)) == map))
      """)

    assert output =~ "keys 1000000"
    assert output =~ "intern 1000000"
    assert output =~ "encoded true"
  end

  test "keys that share prefixes, lengths and hash-relevant bytes keep keys: :intern correct" do
    output =
      child!("""
      # 16-byte keys that differ only in their last byte or only in their first byte, repeated across objects.
      keys = for c <- 0..255, c not in [?", ?\\\\] and c >= 0x20 and c < 0x7F, do: String.duplicate("x", 15) <> <<c>>
      keys = keys ++ for c <- 0x20..0x7E, c not in [?", ?\\\\], do: <<c>> <> String.duplicate("x", 15)
      objects = for i <- 1..200, do: Map.new(Enum.take(Enum.drop(keys, rem(i, 50)), 40), &{&1, i})
      json = RustyJson.encode!(objects)
      IO.puts("same " <> inspect(RustyJson.decode!(json, keys: :intern) == objects))
      """)

    assert output =~ "same true"
  end
end
