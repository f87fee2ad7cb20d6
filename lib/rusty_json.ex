defmodule RustyJson do
  @moduledoc """
  A fast JSON library for Elixir whose core is a Rust NIF; a drop-in replacement for Jason.

      iex> RustyJson.encode!(%{"name" => "RustyJson", "fast" => true})
      ~s({"fast":true,"name":"RustyJson"})

      iex> RustyJson.decode!(~s({"list":[1,2.5,null]}))
      %{"list" => [1, 2.5, nil]}
  """

  alias RustyJson.{DecodeError, DecodeKeys, EncodeError, Native}
  alias RustyJson.{Encode, EncodeOptions}
  require EncodeOptions

  @typedoc "A term that can be encoded."
  @type encodable :: term()

  @doc """
  Encodes `input` to a JSON binary. Returns `{:ok, json}` or `{:error, exception}`; raises `ArgumentError`, as
  Jason does, when a `RustyJson.Fragment` (or an encoder implementation) gives something that is not iodata.

  Options (as Jason's, a keyword list or a map; anything else, or a bad value, raises `ArgumentError` naming it):
    * `:escape`: `:json` (default), `:javascript_safe`, `:html_safe` or `:unicode_safe`.
    * `:maps`: `:naive` (default) or `:strict` (two keys converting to the same string are an error).
    * `:pretty`: `true`, or a keyword list with `:indent`, `:line_separator`, `:after_colon`; as RustyJson 0.3
      takes them too, an indent alone (`pretty: 4`, that many spaces, or `pretty: "\\t"`) and `indent: 4`.

  Options Jason lacks:
    * `:sort_keys`: `false` (default) or `true`: every object's keys in byte order of the key string (atom and
      number keys as the strings they are written as, compared before escaping), at every level: nested maps,
      derived structs' fields, and maps that `RustyJson.Encoder` implementations encode with the options they
      get. `RustyJson.OrderedObject` and keyword lists encoded with `RustyJson.Encode.keyword/2` keep their
      order; fragments are written as given. Keys equal as strings (`:a` and `"a"`) are both written, in
      `Map.to_list/1` order (an error with `maps: :strict`).
    * `:compress`: `:none` (default), `:gzip` (level 6, zlib's default) or `{:gzip, level}` with a level in
      0..9: the result is the final output as a gzip binary (`:zlib.gunzip/1` reads it back), compressed in the
      NIF in slices that yield the scheduler.
    * `:large_decimals`: `:error` (default) or `:object`. A `Decimal` is written as Jason writes it, the string
      `Decimal.to_string(d, :normal)`, unless that would add more than 1024 zeros to its coefficient's digits (an
      exponent above 1024, or more than 1024 zeros between the point and the digits; every double needs at
      most 323): such a decimal is a `RustyJson.EncodeError` naming the limit, or with `:object` RustyJson
      0.3.10's `{"coef":..,"exp":..,"sign":..}` (a few bytes of `1e2000000000` are never gigabytes of zeros).
    * `:protocol`: `true` (default) or `false`, RustyJson 0.3's: no `RustyJson.Encoder` implementation is
      called; every struct is written as a map of its fields (without `__struct__`, whatever `@derive` says:
      not for structs that hold secrets), tuples as arrays, a `MapSet` as an array, a `Range` as
      `{"first":..,"last":..}`, a `URI` as its string (the "Coming from RustyJson 0.3" guide).
    * `:max_output_bytes`: a positive integer, the output's ceiling in bytes (default 1 GiB, or
      `config :rusty_json, max_output_bytes: n`): a longer output is a `RustyJson.EncodeError` naming the size,
      before that memory is taken.

      iex> RustyJson.encode!(%{t: {1, MapSet.new([2])}}, protocol: false)
      ~s({"t":[1,[2]]})

      iex> RustyJson.encode(%{b: 1, a: %{d: 2, c: 3}}, sort_keys: true)
      {:ok, ~s({"a":{"c":3,"d":2},"b":1})}

      iex> {:ok, gzip} = RustyJson.encode(%{a: 1}, compress: :gzip)
      iex> :zlib.gunzip(gzip)
      ~s({"a":1})

      iex> {:error, %RustyJson.EncodeError{}} = RustyJson.encode(List.duplicate("abcdefgh", 1000), max_output_bytes: 100)
  """
  @spec encode(encodable(), keyword() | map()) ::
          {:ok, String.t()} | {:error, EncodeError.t() | Exception.t()}
  def encode(input, opts \\ [])
  def encode(input, []), do: Encode.run(input, EncodeOptions.default())
  def encode(input, opts), do: Encode.run(input, EncodeOptions.new(opts))

  @doc """
  Encodes `input` to a JSON binary; raises `RustyJson.EncodeError` or `Protocol.UndefinedError` on failure.
  Options as in `encode/2`.

      iex> RustyJson.encode!([1, "a", nil])
      ~s([1,"a",null])
      iex> RustyJson.encode!(%{a: "<"}, escape: :html_safe)
      ~S({"a":"\\u003C"})
  """
  @spec encode!(encodable(), keyword() | map()) :: String.t()
  def encode!(input, opts \\ [])

  def encode!(input, []) do
    case Native.encode(input, EncodeOptions.default()) do
      json when is_binary(json) -> json
      other -> other |> Encode.result(input, EncodeOptions.default()) |> unwrap!()
    end
  end

  def encode!(input, opts), do: input |> Encode.run(EncodeOptions.new(opts)) |> unwrap!()

  defp unwrap!({:ok, json}), do: json
  defp unwrap!({:error, exception}), do: raise(exception)

  @doc """
  Encodes `input` to JSON iodata (a binary). Returns `{:ok, iodata}` or `{:error, exception}`. Options as in
  `encode/2`.

      iex> RustyJson.encode_to_iodata(%{a: [1]})
      {:ok, ~s({"a":[1]})}
  """
  @spec encode_to_iodata(encodable(), keyword() | map()) ::
          {:ok, iodata()} | {:error, EncodeError.t() | Exception.t()}
  def encode_to_iodata(input, opts \\ []), do: encode(input, opts)

  @doc """
  Encodes `input` to JSON iodata (a binary); raises like `encode!/2`.

      iex> RustyJson.encode_to_iodata!([true, 1.5])
      "[true,1.5]"
  """
  @spec encode_to_iodata!(encodable(), keyword() | map()) :: iodata()
  def encode_to_iodata!(input, opts \\ []), do: encode!(input, opts)

  # Inputs of at least this many bytes (about 70 µs of work) are decoded detached from the caller's heap: the
  # NIF builds the result in an environment of its own in ~0.5 ms slices on the caller's scheduler and sends it
  # as `{ref, result}`, so no collection copies a partial result and no dirty scheduler competes with the normal
  # ones for the cores. Smaller inputs are built straight on the caller's heap (one call, no message).
  # Measured in bench/notes/20-decode.md and 40-latency.md.
  @detached_threshold 65_536

  # What the NIF reads for a call without options: the constant 0 unless the application config changes the
  # integer digit limit (read when RustyJson compiles).
  @default_decode RustyJson.DecodeOptions.default()

  @doc """
  Decodes JSON `input` (a binary or iodata). Returns `{:ok, term}` or `{:error, %RustyJson.DecodeError{}}`.

  Options (as Jason's, a keyword list or a map; anything else, or a bad value, raises `ArgumentError` naming it):
    * `:keys` - `:strings` (default), `:atoms`, `:atoms!` (existing atoms only; raises `ArgumentError`
      otherwise), `:copy`, `:intern` (keys repeated across objects are built once, and objects with the same
      keys share one keys tuple: faster and smaller for arrays of same-shaped objects; `:strings` does this
      too for inputs of 512 bytes or more) or a function of arity 1 applied to every key,
      in Jason's order: once the pair is complete (its value read, nested keys first); on invalid input, to the
      keys of the pairs completed before the error, so an exception the function raises wins.
    * `:strings` - `:reference` (default) or `:copy` (every string and key a binary of its own, holding only its
      bytes: for strings kept long, in ETS or a process's state, as Jason advises). What a kept string holds
      with `:reference`: a string or key of more than 24 bytes without escapes (more than 64 from OTP 27 on, as
      the VM's own sub-binaries) is a sub-binary of the input and keeps the whole input alive (iodata: its
      flattened binary), as Jason's do; shorter ones are copies. Escaped keys and escaped strings of up to
      64 bytes are copies; escaped strings of 65 bytes to 4 KiB share a binary of at most 4 KiB with the same
      call's others, so a kept one holds at most 4 KiB; longer ones (and some past 1 KiB) have their own.
    * `:floats` - `:native` (default) or `:decimals` (needs the Decimal library).
    * `:objects` - `:maps` (default) or `:ordered_objects` (`%RustyJson.OrderedObject{}`).

  Limits for untrusted input (RustyJson's own, besides Jason's digit limit):
    * `:max_bytes` - an input of more bytes is a `RustyJson.DecodeError` (its message names the limit, its
      `limit` field holds it), found before iodata is flattened or anything is decoded. A positive integer, or
      `:infinity`, `nil` or `0` for none (0 as RustyJson 0.3 takes it).
    * `:validate_strings` - `true` (default). `false` (RustyJson 0.3's option, for trusted input) takes strings'
      bytes as they are, without checking they are UTF-8: faster, and a string may then hold bytes that are not
      UTF-8 (escapes are still checked; keys that are not UTF-8 still cannot become atoms).
    * `:duplicate_keys` - `:first` (default, Jason's: the first of repeated keys wins), `:last`, or `:error`: a
      repeated key is a `RustyJson.DecodeError` at its opening quote whose token is the key as written (keys are
      compared as decoded, or as `keys: fun`'s results; the first object to close with a repeat is reported).
      Ordered objects keep every pair whatever the mode, but fail with `:error`.
    * `:max_depth` - a non-negative integer or `:infinity` (default). Arrays and objects nested deeper are a
      `RustyJson.DecodeError` at the bracket that goes past the limit (`[]` has depth 1, a top-level scalar 0).
    * `:decoding_integer_digit_limit` - an integer token (minus sign included) longer than this many bytes is a
      `RustyJson.DecodeError` whose token is the integer (floats and `0` are not limited). The default is 1024,
      Jason's, or `config :rusty_json, decoding_integer_digit_limit: n`, read at compile time as Jason reads its
      own setting (so a call without options stays a constant: set it in `config.exs` and recompile RustyJson).

  For request bodies: `max_depth` when the result is walked by recursive code, `duplicate_keys: :error` against
  parser-differential attacks (another component reading the last of repeated keys), and a digit limit well
  under 1024 when integers feed arithmetic (huge integers convert and multiply in quadratic time).
  """
  @spec decode(iodata(), keyword() | map()) :: {:ok, term()} | {:error, DecodeError.t()}
  def decode(input, opts \\ [])

  # The common call (a binary, no options, not large) calls the NIF directly: no `run/2` in between.
  def decode(input, []) when is_binary(input) and byte_size(input) < @detached_threshold do
    case Native.decode(input, @default_decode) do
      {:error, reason} -> {:error, decode_exception(reason, input)}
      term -> {:ok, term}
    end
  end

  def decode(input, []) when is_binary(input) do
    case run(input, @default_decode) do
      {:error, reason} -> {:error, decode_exception(reason, input)}
      term -> {:ok, term}
    end
  end

  def decode(input, opts) do
    with :ok <- RustyJson.DecodeOptions.check_size(input, opts) do
      input = to_binary(input)

      case run_with(input, opts) do
        {:error, reason} -> {:error, decode_exception(reason, input)}
        term -> {:ok, term}
      end
    end
  end

  @doc """
  Decodes JSON `input` (a binary or iodata); raises `RustyJson.DecodeError` on invalid input. Options as in
  `decode/2`.

      iex> RustyJson.decode!(~s({"a": [1, 2.5, null]}), keys: :atoms)
      %{a: [1, 2.5, nil]}
      iex> RustyJson.decode!(["[1,", "2]"])
      [1, 2]
  """
  @spec decode!(iodata(), keyword() | map()) :: term()
  def decode!(input, opts \\ [])

  def decode!(input, []) when is_binary(input) and byte_size(input) < @detached_threshold do
    case Native.decode(input, @default_decode) do
      {:error, reason} -> raise decode_exception(reason, input)
      term -> term
    end
  end

  def decode!(input, []) when is_binary(input) do
    case run(input, @default_decode) do
      {:error, reason} -> raise decode_exception(reason, input)
      term -> term
    end
  end

  def decode!(input, opts) do
    with {:error, error} <- RustyJson.DecodeOptions.check_size(input, opts), do: raise(error)
    input = to_binary(input)

    case run_with(input, opts) do
      {:error, reason} -> raise decode_exception(reason, input)
      term -> term
    end
  end

  @doc """
  The decoded value at a JSON Pointer (RFC 6901, see `RustyJson.Pointer`) of the document `input`, or the values
  at a list of pointers (in the same order), without building the rest of the document.

  Everything outside the values is skimmed 64 bytes at a time (SIMD on x86-64 and aarch64), but still validated:
  a document that is not valid JSON anywhere, even after the values, is `{:error, %RustyJson.DecodeError{}}`
  with the position and message `decode/2` gives for it. A path the document does not hold is
  `{:error, %RustyJson.PathError{reason: :missing}}`, unless `default:` gives the value to use instead.

  A pointer names members as the document writes them (RFC 6901), whatever `keys:` says: `"/user/name"` is
  the member `"name"` of the member `"user"`, with `keys: :atoms`, `:atoms!` or a function too. Every
  `decode/2` option applies to the values returned (a function to their keys, atoms made of their keys), and
  `max_depth:` and `decoding_integer_digit_limit:` to the whole document, as in `decode/2`. So the values are
  what `decode!/2` then `get_in/2` give with the same options, with the path's keys as written: where a
  `keys:` function renames a member on the path, the pointer still uses its name in the document, and where it
  maps two members of one object to the same key, the pointer still tells them apart (`decode!/2` keeps one).
  Repeated keys: the first wins (`decode/2`'s default), or the last with `duplicate_keys: :last` (but the first
  with `objects: :ordered_objects`, which keep every pair, as `get_in/2` then fetches the first); with
  `duplicate_keys: :error` a repeat of a key on a path (as written), or anywhere inside a value returned (as
  decoded), is an error (repeats elsewhere are not looked for). A large document is walked in slices on the
  calling scheduler, as `decode/2` does.

      iex> RustyJson.get(~s({"type": "order.paid", "data": {"id": 7, "lines": [1, 2]}}), "/type")
      {:ok, "order.paid"}

      iex> RustyJson.get(~s({"meta": {"total": 2}, "data": [{"id": 1}, {"id": 2}]}), ["/meta/total", "/data/1"])
      {:ok, [2, %{"id" => 2}]}

      iex> RustyJson.get(~s({"a/b": {"m~n": [true]}}), "/a~1b/m~0n/0")
      {:ok, true}

      iex> RustyJson.get(~s({"data": [1]}), "/data/5", default: :none)
      {:ok, :none}

      iex> RustyJson.get(~s({"data": [1]}), "/data/5")
      {:error, %RustyJson.PathError{pointer: "/data/5", reason: :missing}}

      iex> RustyJson.get(~s({"id": 1, "rest": [1,]}), "/id")
      {:error, %RustyJson.DecodeError{position: 21, token: nil, data: ~s({"id": 1, "rest": [1,]})}}

      iex> RustyJson.get(~s({"user": {"name": "Ada"}}), "/user", keys: :atoms)
      {:ok, %{name: "Ada"}}

      iex> RustyJson.get(~s({"A": 1, "a": 2, "B": {"x": 3}}), ["/a", "/B/x"], keys: &String.downcase/1)
      {:ok, [2, 3]}
  """
  @spec get(iodata(), RustyJson.Pointer.t() | [RustyJson.Pointer.t()], keyword() | map()) ::
          {:ok, term()} | {:error, DecodeError.t() | RustyJson.PathError.t()}
  def get(input, pointer_or_pointers, opts \\ []),
    do: RustyJson.Get.run(input, pointer_or_pointers, opts)

  @doc """
  `get/3`, raising `RustyJson.DecodeError` for an invalid document and `RustyJson.PathError` for a missing path
  (without `default:`).

      iex> RustyJson.get!(~s({"meta": {"total": 120}}), "/meta/total")
      120

      iex> RustyJson.get!(~s({"meta": {}}), "/meta/total")
      ** (RustyJson.PathError) no value at the JSON Pointer "/meta/total"
  """
  @spec get!(iodata(), RustyJson.Pointer.t() | [RustyJson.Pointer.t()], keyword() | map()) ::
          term()
  def get!(input, pointer_or_pointers, opts \\ []) do
    case RustyJson.Get.run(input, pointer_or_pointers, opts) do
      {:ok, value} -> value
      {:error, exception} -> raise exception
    end
  end

  @compile {:inline, to_binary: 1}
  defp to_binary(input) when is_binary(input), do: input
  defp to_binary(input), do: IO.iodata_to_binary(input)

  defp run(input, flags) when byte_size(input) < @detached_threshold,
    do: Native.decode(input, flags)

  defp run(input, flags) do
    ref = make_ref()

    case Native.decode_detached(Native.aligned(input), flags, ref) do
      :ok ->
        receive do
          {^ref, result} -> result
        end

      error ->
        error
    end
  end

  defp run_with(input, []), do: run(input, @default_decode)

  defp run_with(input, opts), do: run_parsed(input, RustyJson.DecodeOptions.parse(opts))

  @doc false
  # `decode/2` with options already parsed by `RustyJson.DecodeOptions.parse/1`: `RustyJson.Stream` parses them
  # once per stream rather than once per item.
  @spec decode_parsed(binary(), tuple()) :: {:ok, term()} | {:error, DecodeError.t()}
  def decode_parsed(input, parsed) do
    case run_parsed(input, parsed) do
      {:error, reason} -> {:error, decode_exception(reason, input)}
      term -> {:ok, term}
    end
  end

  defp run_parsed(input, parsed) do
    case parsed do
      {native, nil, _ordered, _duplicates} ->
        run(input, native)

      {native, key_fun, ordered, duplicates} ->
        case run(input, native) do
          {:error, reason} = error ->
            # Jason converted the keys of the pairs completed before the error: a raising function wins.
            DecodeKeys.before_error(input, reason, key_fun)
            error

          term ->
            DecodeKeys.apply(term, input, {key_fun, ordered, duplicates})
        end
    end
  end

  # `keys: :atoms!` (or `:atoms`) could not make this key an atom: raise what Jason raises (String.to_atom/1
  # and String.to_existing_atom/1 are what it calls), even from decode/2.
  defp decode_exception({tag, {start, stop}}, input) when tag in [:atom, :existing_atom] do
    # A long key comes as its span (quotes excluded): decoded here, in slices like any string. The parse already
    # checked it (or took its bytes as they are, `validate_strings: false`), so its bytes are not checked again.
    key =
      RustyJson.decode!(binary_part(input, start - 1, stop - start + 2), validate_strings: false)

    decode_exception({tag, key}, input)
  end

  # A key that is not UTF-8 (`validate_strings: false`) is not given to String's functions, whose badarg would
  # not name it; `inspect/1` shows its bytes.
  defp decode_exception({:existing_atom, key}, _input) do
    if String.valid?(key), do: String.to_existing_atom(key)
    raise ArgumentError, "not an already existing atom: #{inspect(key)}"
  end

  defp decode_exception({:atom, key}, _input) do
    _ = if String.valid?(key), do: String.to_atom(key)
    raise ArgumentError, "could not turn the key #{inspect(key)} into an atom"
  end

  defp decode_exception({:out_of_memory, position, needed}, input),
    do: %DecodeError{position: position, data: input, memory: needed}

  defp decode_exception({:term_limit, position, max}, input),
    do: %DecodeError{position: position, data: input, max_term_bytes: max}

  defp decode_exception({position, token}, input),
    do: %DecodeError{position: position, token: token, data: input}

  defp decode_exception(position, input) when is_integer(position),
    do: %DecodeError{position: position, data: input}
end
