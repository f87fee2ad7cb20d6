defmodule RustyJson.Stream do
  @moduledoc """
  Decodes and encodes streams of JSON: JSON Lines (NDJSON), concatenated documents, and the items of one large
  array, lazily and in bounded memory.

  Decoding reads any `Enumerable` of binaries (`File.stream!(path, 65_536)`, a socket's chunks, ...) cut
  anywhere: inside a string, a number, an escape or a multi-byte character. One NIF call per chunk scans each
  byte once and decodes each item as it reaches the item's end, with the options given, from sub-binaries of the
  chunk (no copy); an item spanning chunks is assembled once, when it ends, and decoded by `RustyJson.decode/2`.

      iex> ["{\\"a\\":1}\\n[tr", "ue]\\n\\"x\\"\\n"] |> RustyJson.Stream.decode_documents() |> Enum.to_list()
      [%{"a" => 1}, [true], "x"]

      iex> [" [1, {\\"b\\"", ": 2}, 3] "] |> RustyJson.Stream.decode_array() |> Enum.to_list()
      [1, %{"b" => 2}, 3]

      iex> [%{a: 1}, [2]] |> RustyJson.Stream.encode_lines() |> Enum.join()
      ~s({"a":1}\\n[2]\\n)

      iex> 1..3 |> RustyJson.Stream.encode_array() |> Enum.join()
      "[1,2,3]"

  Errors raise `RustyJson.DecodeError` when the stream reaches them (the items before are emitted), with
  `position` the absolute byte offset in the stream and `line` its line (see `RustyJson.DecodeError`):

      iex> ["1\\n2\\n", "[3,]\\n"] |> RustyJson.Stream.decode_documents() |> Enum.to_list()
      ** (RustyJson.DecodeError) unexpected byte at position 7 (line 3): 0x5D ("]")
  """

  alias RustyJson.{DecodeError, Native, PathError}
  require RustyJson.EncodeOptions

  # The most bytes one NIF call scans (splitting alone: under 0.5 ms even for 32K tiny items; the decoding stops
  # taking items after 0.5 ms and leaves the rest): larger chunks are fed in pieces of this size.
  @max_call 65_536

  # An item spanning chunks keeps its pieces as iodata; every this many small pieces (1-byte chunks) are joined
  # into one binary, so the list stays short and the item is still copied in linear time.
  @pieces 512
  @small_pieces_bytes 65_536

  # The longest token (a string, key or number) of an envelope around the array at `at:` when no `max_bytes:` is
  # given: 256 MiB, far past any real envelope's, and within what a VM with a few GB can buffer.
  @envelope_token_bytes 256 * 1024 * 1024

  @doc """
  Decodes a stream of JSON documents: JSON Lines / NDJSON (`\\n` or `\\r\\n`, blank lines skipped) or documents
  concatenated or separated by whitespace. Returns a lazy `Stream` of the decoded values.

  `enumerable` yields binaries (or iodata) cut anywhere. Every `RustyJson.decode/2` option applies to every item.
  A value that is not valid JSON, or a closing bracket, comma or colon between documents, raises
  `RustyJson.DecodeError` when the stream reaches it, with the absolute `position` and the `line`. Newlines are
  whitespace: a document may span lines (pretty-printed documents one after another work too). With
  `max_bytes: n`, a document of more than `n` bytes raises `RustyJson.DecodeError` (its `limit` set, `position`
  where it starts) as soon as the stream has read `n` bytes past its start, before its pieces are joined or it is
  decoded (documents are then decoded in Elixir after that check: somewhat slower).

  While the stream decodes, the process consuming it keeps a heap of at least 65,536 words (512 KB; see
  `Process.flag/2`'s `:min_heap_size`), so that each chunk's values do not grow and shrink it again; the
  process's own setting comes back when the stream ends, halts or raises. The same holds for `decode_array/2`.

      iex> ["1 2", "3 [4", "]"] |> RustyJson.Stream.decode_documents() |> Enum.to_list()
      [1, 23, [4]]

      iex> [~s({"k":1}\\r\\n\\r\\n{"k":2}\\r\\n)]
      ...> |> RustyJson.Stream.decode_documents(keys: :atoms)
      ...> |> Enum.to_list()
      [%{k: 1}, %{k: 2}]
  """
  @spec decode_documents(Enumerable.t(), keyword() | map()) :: Enumerable.t()
  def decode_documents(enumerable, opts \\ []), do: decode(enumerable, :documents, opts)

  @doc """
  Decodes the items of one JSON array, lazily: memory is bounded by the largest item (and the chunk size), not by
  the array; with `at:`, by the longest token of the envelope too. Without `max_bytes:` an item has no limit
  (give it for input you do not trust) and an envelope's token has one of 256 MiB. Options as in `decode_documents/2`, and:

    * `:at` - a JSON Pointer (RFC 6901, see `RustyJson.Pointer`): the array is the value at that path of the
      document, not the document itself: `at: "/data"` for `{"data": [...], "meta": {...}}`, `at: "/hits/hits"`
      for a search engine's response. Everything around the array (its envelope) is validated as it streams
      and kept only as far as `:envelope` asks; an invalid envelope raises `RustyJson.DecodeError` at its
      absolute position, before or after the items. A path the document does not hold, or holding something
      other than an array, raises `RustyJson.PathError` (`reason: :missing` or `:not_an_array`) once the stream
      has been read. Of repeated keys on the path, the first is followed (as `decode/2` keeps the first). The
      pointer names members as the document writes them, whatever `keys:` says (which applies to the items and
      the envelope's keys).
      `max_depth:` and `decoding_integer_digit_limit:` hold in the envelope too; `max_bytes:` holds for each item
      (as for `decode_documents/2`'s documents), for each token of the envelope (a string, key or number
      longer than it fails at its start as soon as the stream has read `max_bytes` bytes of it, so an endless
      one is never kept whole), and for the envelope kept with `envelope: true`.
    * `:envelope` - `true` to emit, after the items, `{:envelope, value}`: the whole document decoded with the
      options, the streamed array replaced by `[]` (the envelope's bytes are kept while the stream runs; without
      this option they are not). Default `false`.

  A missing `[` or `]`, a missing or extra comma, or anything but whitespace after the `]` (after the
  document, with `:at`) raises `RustyJson.DecodeError` (after the items before it are emitted).

      iex> ["[", "1,2", ",3]"] |> RustyJson.Stream.decode_array() |> Stream.take(2) |> Enum.to_list()
      [1, 2]

      iex> ["[1,2] 3"] |> RustyJson.Stream.decode_array() |> Enum.to_list()
      ** (RustyJson.DecodeError) unexpected byte at position 6 (line 1): 0x33 ("3")

      iex> [~s({"meta": {"page": 1}, "da), ~s(ta": [{"id": 1}, {"id": 2}], "next": null})]
      ...> |> RustyJson.Stream.decode_array(at: "/data", envelope: true)
      ...> |> Enum.to_list()
      [%{"id" => 1}, %{"id" => 2}, {:envelope, %{"data" => [], "meta" => %{"page" => 1}, "next" => nil}}]

      iex> [~s({"hits": {"total": 2, "hits": [1, 2]}})]
      ...> |> RustyJson.Stream.decode_array(at: "/hits/hits")
      ...> |> Enum.to_list()
      [1, 2]

      iex> [~s({"data": {"id": 1}})] |> RustyJson.Stream.decode_array(at: "/data") |> Enum.to_list()
      ** (RustyJson.PathError) the value at the JSON Pointer "/data" is not an array
  """
  @spec decode_array(Enumerable.t(), keyword() | map()) :: Enumerable.t()
  def decode_array(enumerable, opts \\ []) do
    case path_options(opts) do
      {nil, false, opts} -> decode(enumerable, :array_items, opts)
      {pointer, envelope?, opts} -> decode(enumerable, {:at, pointer || "", envelope?}, opts)
    end
  end

  # `at:` and `envelope:` taken out of the options (the rest are decode options).
  defp path_options(opts) when is_map(opts) do
    {pointer, opts} = Map.pop(opts, :at)
    {envelope?, opts} = Map.pop(opts, :envelope, false)
    path_options(pointer, envelope?, opts)
  end

  defp path_options(opts) when is_list(opts) do
    if Enum.all?(opts, &match?({_, _}, &1)) do
      {pointer, opts} = Keyword.pop(opts, :at)
      {envelope?, opts} = Keyword.pop(opts, :envelope, false)
      path_options(pointer, envelope?, opts)
    else
      # Not a keyword list: the decode options name the problem.
      {nil, false, opts}
    end
  end

  defp path_options(opts), do: {nil, false, opts}

  defp path_options(pointer, envelope?, opts) do
    unless is_boolean(envelope?) do
      raise ArgumentError,
            "invalid value for the :envelope option: #{inspect(envelope?)}; expected true or false"
    end

    # Checked when the stream is made.
    if pointer != nil, do: RustyJson.Pointer.parse!(pointer)
    {pointer, envelope?, opts}
  end

  @doc """
  Encodes every item of `enumerable` as one line of JSON Lines: a lazy `Stream` of iodata, each a JSON document
  followed by `"\\n"`. Every `RustyJson.encode/2` option applies, except `:pretty` and `:compress` (a line must be
  one line of JSON text), which raise `ArgumentError`. An item that cannot be encoded raises as
  `RustyJson.encode!/2` does.

      iex> [%{b: 1, a: 2}, "é"] |> RustyJson.Stream.encode_lines(sort_keys: true, escape: :unicode_safe)
      ...> |> Enum.map(&IO.iodata_to_binary/1)
      [~s({"a":2,"b":1}\\n), ~s("\\\\u00E9"\\n)]
  """
  @spec encode_lines(Enumerable.t(), keyword() | map()) :: Enumerable.t()
  def encode_lines(enumerable, opts \\ []) do
    opts = encode_options(opts, [:pretty, :compress], "encode_lines/2")
    Stream.map(enumerable, &[encode!(&1, opts), ?\n])
  end

  @doc """
  Encodes the items of `enumerable` as one JSON array: a lazy `Stream` of binaries that together are the array,
  each about `chunk_bytes:` bytes (default 65,536; one item larger than that makes a larger binary), so a
  chunked HTTP response (`Enum.reduce_while(chunks, conn, &Plug.Conn.chunk(&2, &1) ...)`) sends few, well-filled
  chunks. An empty enumerable gives `"[]"`. Every `RustyJson.encode/2` option applies to each item (`pretty:`
  lays out each item on its own), except `:compress`, which raises `ArgumentError`.

      iex> 1..5 |> RustyJson.Stream.encode_array(chunk_bytes: 4) |> Enum.to_list()
      ["[1,2", ",3,4", ",5]"]

      iex> [] |> RustyJson.Stream.encode_array() |> Enum.to_list()
      ["[]"]
  """
  @spec encode_array(Enumerable.t(), keyword() | map()) :: Enumerable.t()
  def encode_array(enumerable, opts \\ []) do
    # Checked first, so `opts` is a keyword list or a map below (encode options ignore `chunk_bytes`).
    encode_opts = encode_options(opts, [:compress], "encode_array/2")

    chunk_bytes =
      case if(is_map(opts),
             do: Map.fetch(opts, :chunk_bytes),
             else: Keyword.fetch(opts, :chunk_bytes)
           ) do
        {:ok, chunk_bytes} -> chunk_bytes
        :error -> 65_536
      end

    unless is_integer(chunk_bytes) and chunk_bytes > 0 do
      raise ArgumentError,
            "invalid value for the :chunk_bytes option: #{inspect(chunk_bytes)}; " <>
              "expected a positive integer"
    end

    opts = encode_opts

    Stream.transform(
      enumerable,
      fn -> {"[", [], 0, false} end,
      fn item, {separator, acc, size, sent?} ->
        json = encode!(item, opts)
        acc = [acc, separator, json]
        size = size + byte_size(json) + 1

        if size >= chunk_bytes,
          do: {[IO.iodata_to_binary(acc)], {",", [], 0, true}},
          else: {[], {",", acc, size, sent?}}
      end,
      fn
        {"[", _, _, false} = state -> {["[]"], state}
        {_, acc, _, _} = state -> {[IO.iodata_to_binary([acc, ?]])], state}
      end,
      fn _ -> :ok end
    )
  end

  # The encode options, parsed once for the whole stream (and checked as `RustyJson.encode/2` checks them), with
  # the options `function` does not take refused; `[]` when they are the defaults, so each item takes
  # `encode!/2`'s call without options.
  defp encode_options(opts, refused, function) do
    parsed = RustyJson.EncodeOptions.new(opts)

    for name <- refused, given?(parsed, name) do
      raise ArgumentError,
            "RustyJson.Stream.#{function} does not take the #{inspect(name)} option"
    end

    if parsed == RustyJson.EncodeOptions.default(), do: [], else: parsed
  end

  # `RustyJson.encode!/2` with options parsed by `encode_options/3`.
  defp encode!(item, []), do: RustyJson.encode!(item)

  defp encode!(item, parsed) do
    case RustyJson.Encode.run(item, parsed) do
      {:ok, json} -> json
      {:error, exception} -> raise exception
    end
  end

  defp given?(parsed, :pretty), do: elem(parsed, 2) != nil

  defp given?(parsed, :compress),
    do: elem(RustyJson.EncodeOptions.split_compression(parsed), 1) != nil

  ## Decoding

  # The state: the splitter, the options, `base` (the offset of the next byte fed), and the pieces of the item
  # still open at the end of the last chunk (or nil). After an error the stream emits the values before it, then
  # raises when asked for more.
  defp decode(enumerable, mode, opts) do
    # Options parsed (and checked) once for the whole stream, when it is made.
    parsed = RustyJson.DecodeOptions.parse(opts)
    max_bytes = RustyJson.DecodeOptions.max_bytes(opts)

    Stream.transform(
      enumerable,
      fn ->
        # The NIF decodes items as it finds them, unless a key function must run on them in Elixir. Records
        # repeat their keys: the NIF's key cache shares them (the same values; half the key work).
        # With `max_bytes:` every item's size is checked here before it is decoded (or its pieces joined).
        direct =
          if elem(parsed, 1) == nil and max_bytes == nil,
            do: RustyJson.DecodeOptions.interned_keys(elem(parsed, 0))

        state = %{
          splitter: Native.splitter_new(splitter_mode(mode, parsed, max_bytes)),
          parsed: parsed,
          direct: direct,
          base: 0,
          pending: nil,
          max_bytes: max_bytes,
          at: with({:at, pointer, _} <- mode, do: pointer, else: (_ -> nil)),
          envelope: if(match?({:at, _, true}, mode), do: {[], []})
        }

        # Last: the after function that restores it runs only once this function has returned.
        raise_heap_floor()
        state
      end,
      &feed/2,
      &finish/1,
      fn _ -> restore_heap_floor() end
    )
  end

  # The envelope's tokens are held to `max_bytes` in the NIF, which keeps a token cut by a chunk's end; without
  # it, to @envelope_token_bytes, so that one that never ends is an error before memory runs out.
  defp splitter_mode({:at, pointer, _envelope?}, parsed, max_bytes),
    do:
      {:at, RustyJson.Pointer.parse!(pointer), elem(parsed, 0),
       max_bytes || @envelope_token_bytes}

  defp splitter_mode(mode, _parsed, _max_bytes), do: mode

  # Each chunk's values (200-300 KB of terms for 64 KiB of JSON) are built on the consuming process's heap. With
  # the default minimum heap the collector grows that heap for every chunk and shrinks it again, each time on
  # fresh memory from the OS: a fifth of a stream's time went to page faults (OTP 29, bench/notes/95-streams.md).
  # While a stream decodes, its process keeps a heap of at least this many words (512 KB); the process's own
  # setting comes back when the stream ends, halts or raises (a stack in the process dictionary, for streams
  # consumed inside one another).
  @heap_floor_words 65_536
  @heap_floors :rusty_json_stream_heap_floors

  defp raise_heap_floor do
    old = Process.flag(:min_heap_size, @heap_floor_words)
    if old > @heap_floor_words, do: Process.flag(:min_heap_size, old)
    Process.put(@heap_floors, [old | Process.get(@heap_floors, [])])
  end

  defp restore_heap_floor do
    case Process.get(@heap_floors, []) do
      [old] ->
        Process.delete(@heap_floors)
        Process.flag(:min_heap_size, old)

      [old | rest] ->
        Process.put(@heap_floors, rest)
        Process.flag(:min_heap_size, old)

      [] ->
        :ok
    end

    :ok
  end

  defp feed(chunk, state) when not is_binary(chunk),
    do: chunk |> IO.iodata_to_binary() |> feed(state)

  defp feed(chunk, state) do
    # A chunk at a bit offset (bit-level matching makes them) is copied once here, not at every NIF call on it.
    case feed_slices(Native.aligned(chunk), state, []) do
      {segments, {:failed, exception}} -> {failing(segments, exception), :failed}
      {segments, state} -> {emitted(segments), state}
    end
  end

  # The values decoded from a chunk are kept as segments, lists in document order, latest segment first: the NIF's
  # list of a whole chunk is emitted as it is (no copy), and items decoded one by one are one-value segments.
  defp emitted([segment]), do: segment
  defp emitted(segments), do: segments |> :lists.reverse() |> :lists.append()

  defp add([], segments), do: segments
  defp add(values, segments), do: [values | segments]

  # The values, then the exception raised when the consumer asks for the next one.
  defp failing(segments, exception) do
    Stream.concat(emitted(segments), Stream.map([exception], &raise/1))
  end

  defp feed_slices(chunk, state, values) when byte_size(chunk) > @max_call do
    <<slice::binary-size(@max_call), rest::binary>> = chunk

    case feed_slice(slice, state, values) do
      {values, {:failed, _} = failed} -> {values, failed}
      {values, state} -> feed_slices(rest, state, values)
    end
  end

  defp feed_slices(chunk, state, values), do: feed_slice(chunk, state, values)

  # `values` are the segments decoded so far from this chunk.
  defp feed_slice(slice, %{base: base} = state, values) do
    {spans, decoded, open, error} = Native.split_chunk(state.splitter, slice, state.direct)

    case items(spans, decoded, slice, base, state, values) do
      {values, {:failed, _} = failed} ->
        {values, failed}

      {values, _state} when error != nil ->
        {values, {:failed, split_exception(error, slice, base)}}

      {values, state} ->
        fed = base + byte_size(slice)
        state = keep_envelope(state, slice, base)

        case over_limit(state, open, fed) do
          nil -> {values, %{state | base: fed, pending: keep(open, slice, base, state.pending)}}
          exception -> {values, {:failed, exception}}
        end
    end
  end

  # `max_bytes:`: an item still open at `fed` (the stream's bytes so far) that already holds more than the limit
  # fails before more of it is kept; so does an envelope (`envelope: true`) kept beyond it.
  defp over_limit(%{max_bytes: nil}, _open, _fed), do: nil

  defp over_limit(%{max_bytes: max}, open, fed) when is_integer(open) and fed - open > max,
    do: too_long(open, max)

  defp over_limit(%{max_bytes: max, envelope: {before, behind}}, _open, _fed) do
    if IO.iodata_length(before) + IO.iodata_length(behind) > max, do: too_long(0, max)
  end

  defp over_limit(_state, _open, _fed), do: nil

  defp too_long(start, max),
    do: %DecodeError{position: start, offset: start, data: nil, limit: max}

  # A structural error at a byte of `slice`, or one in the envelope around an array at a path, which names its
  # bytes (an earlier chunk may hold them): the offending byte, an invalid token, or none at the end; or a token
  # of that envelope longer than `max_bytes:`.
  defp split_exception({position, line}, slice, base) do
    data = if slice == "", do: "", else: binary_part(slice, position - base, 1)
    %DecodeError{position: position, data: data, line: line, offset: position}
  end

  defp split_exception({:too_long, position, limit}, _slice, _base), do: too_long(position, limit)

  defp split_exception({position, line, data}, _slice, _base) do
    token = if byte_size(data) > 1, do: data
    %DecodeError{position: position, data: data, token: token, line: line, offset: position}
  end

  # `envelope: true`: the bytes of `slice` outside the array at the path, copied (a part of a chunk would keep
  # the whole chunk alive).
  defp keep_envelope(%{envelope: nil} = state, _slice, _base), do: state

  defp keep_envelope(%{envelope: {before, behind}} = state, slice, base) do
    {start, stop} = Native.splitter_marks(state.splitter)
    size = byte_size(slice)
    before_size = if start, do: min(max(start - base, 0), size), else: size
    from = if stop, do: min(max(stop - base, 0), size), else: size
    before = [before, copy(binary_part(slice, 0, before_size), size)]
    behind = [behind, copy(binary_part(slice, from, size - from), size)]
    %{state | envelope: {before, behind}}
  end

  defp copy(part, whole) when byte_size(part) == whole, do: part
  defp copy(part, _whole), do: :binary.copy(part)

  # What ends the stream after its items: a path error, or the envelope.
  defp ending(%{at: pointer}, reason, values) do
    failing(values, %PathError{pointer: pointer, reason: reason})
  end

  defp envelope(%{envelope: nil}), do: []

  defp envelope(%{envelope: {before, behind}, parsed: parsed}) do
    case RustyJson.decode_parsed(IO.iodata_to_binary([before, "[]", behind]), parsed) do
      {:ok, value} -> [{:envelope, value}]
      {:error, exception} -> raise exception
    end
  end

  defp finish(%{base: base} = state) do
    {spans, _open?, error, found} = Native.split_finish(state.splitter)

    case items(spans, "", base, state, []) do
      {values, {:failed, exception}} ->
        {failing(values, exception), :failed}

      {values, _state} when error != nil ->
        {failing(values, split_exception(error, "", base)), :failed}

      {values, state} when found != :array ->
        {ending(state, found, values), :failed}

      {values, state} ->
        {Stream.concat(emitted(values), Stream.flat_map([state], &envelope/1)), state}
    end
  end

  # The item continued from an earlier chunk comes first, then the items the NIF decoded while splitting, then
  # the items left as spans.
  defp items(<<start::64, _::binary>> = spans, decoded, slice, base, state, values)
       when start < base do
    <<continued::binary-size(24), rest::binary>> = spans

    case item(continued, slice, base, state, values) do
      {_values, {:failed, _}} = failed -> failed
      {values, state} -> items(rest, slice, base, state, add(decoded, values))
    end
  end

  defp items(spans, decoded, slice, base, state, values),
    do: items(spans, slice, base, state, add(decoded, values))

  # Decodes the items in `spans` (`<<start::64, end::64, line::64>>` each) that end in `slice` (at `base`). Items
  # wholly inside the slice go to the NIF in one call (unless a key function is set: it runs in Elixir); an item
  # that began in an earlier chunk, and those the NIF leaves (an error, a large item, after its ~0.5 ms), are
  # decoded one by one.
  defp items(<<start::64, _::binary>> = spans, slice, base, %{direct: direct} = state, values)
       when start >= base and direct != nil do
    {decoded, rest} = Native.decode_items(slice, base, spans, direct)
    values = add(decoded, values)

    case rest do
      <<>> -> {values, state}
      rest -> item(rest, slice, base, state, values)
    end
  end

  defp items(<<>>, _slice, _base, state, values), do: {values, state}
  defp items(spans, slice, base, state, values), do: item(spans, slice, base, state, values)

  # (No line: an item still open at a chunk's end fails the same way without one, so a failure does not depend
  # on where the chunks are cut.)
  defp item(<<start::64, stop::64, _::binary>>, _slice, _base, %{max_bytes: max}, values)
       when is_integer(max) and stop - start > max,
       do: {values, {:failed, too_long(start, max)}}

  defp item(<<start::64, stop::64, line::64, rest::binary>>, slice, base, state, values) do
    item =
      if start >= base,
        do: binary_part(slice, start - base, stop - start),
        else: joined(state.pending, binary_part(slice, 0, stop - base))

    case RustyJson.decode_parsed(item, state.parsed) do
      {:ok, value} ->
        items(rest, slice, base, %{state | pending: nil}, [[value] | values])

      {:error, %DecodeError{position: at} = error} ->
        exception = %DecodeError{
          error
          | position: start + at,
            data: with_delimiter(item, at, slice, stop - base),
            line: line + newlines(binary_part(item, 0, at)),
            offset: start
        }

        {values, {:failed, exception}}
    end
  end

  defp newlines(bytes), do: bytes |> :binary.matches("\n") |> length()

  # An item that fails at its own end (a number cut short: `1.`, `-`, `2e`) fails, in the whole document, at the
  # byte that ended it (`]`, `,`, a space): that byte joins the error's data, so the message names it as
  # `decode/2`'s does.
  defp with_delimiter(item, at, slice, next)
       when at == byte_size(item) and next < byte_size(slice),
       do: item <> binary_part(slice, next, 1)

  defp with_delimiter(item, _at, _slice, _next), do: item

  # The pieces of the item still open at the end of `slice`: `{blocks, tail, count, bytes}`, both lists reversed
  # (tail: the latest pieces, blocks: joined or set-aside runs of earlier ones).
  defp keep(nil, _slice, _base, _pending), do: nil

  defp keep(start, slice, base, nil) when start >= base,
    do: {[], [binary_part(slice, start - base, byte_size(slice) - (start - base))], 1, 0}

  defp keep(_start, slice, _base, {blocks, tail, count, bytes}) do
    tail = [slice | tail]
    count = count + 1
    bytes = bytes + byte_size(slice)

    cond do
      count < @pieces -> {blocks, tail, count, bytes}
      bytes <= @small_pieces_bytes -> {[tail_binary(tail) | blocks], [], 0, 0}
      true -> {[:lists.reverse(tail) | blocks], [], 0, 0}
    end
  end

  defp tail_binary(tail), do: tail |> :lists.reverse() |> IO.iodata_to_binary()

  defp joined({blocks, tail, _count, _bytes}, last),
    do: IO.iodata_to_binary(:lists.reverse(blocks, [:lists.reverse(tail), last]))
end
