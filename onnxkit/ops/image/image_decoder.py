"""ImageDecoder: decode an encoded image (a 1-D uint8 tensor) to uint8 [H, W, C].

    RGB -> C = 3;  BGR -> C = 3, channels reversed;  Grayscale -> C = 1
    a stream that cannot be decoded gives an empty [0, 0, C] tensor, as the spec says

Decoding uses Pillow (BMP, JPEG, JPEG 2000, TIFF, PNG, WebP, PNM, as far as the
installed Pillow supports them).  https://onnx.ai/onnx/operators/onnx__ImageDecoder.html
"""

import io
import warnings

import numpy as np

from onnxkit.errors import AttributeMismatchError, LimitExceededError, describe_node
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation

_CHANNELS = {"RGB": 3, "BGR": 3, "Grayscale": 1}


@op("ImageDecoder", 20, context=True)
def image_decoder(encoded_stream, *, pixel_format="RGB", ctx):
    from PIL import Image  # imported here: only this operator needs Pillow

    if pixel_format not in _CHANNELS:
        raise AttributeMismatchError(
            f"{describe_node(ctx.node)}: pixel_format must be RGB, BGR or Grayscale, "
            f"got {pixel_format!r}"
        )
    channels = _CHANNELS[pixel_format]
    try:
        with warnings.catch_warnings():  # size is bounded by max_tensor_bytes instead
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(encoded_stream.tobytes()))
            check_allocation((image.height, image.width, channels), np.uint8, "decoded image")
            decoded = np.asarray(image.convert("L" if channels == 1 else "RGB"), dtype=np.uint8)
    except Image.DecompressionBombError as exc:
        raise LimitExceededError(f"{describe_node(ctx.node)}: {exc}") from None
    except (OSError, ValueError, SyntaxError):  # not an image Pillow can decode
        return np.zeros((0, 0, channels), dtype=np.uint8)
    if channels == 1:
        return decoded[:, :, None].copy()
    return decoded[:, :, ::-1].copy() if pixel_format == "BGR" else decoded.copy()
